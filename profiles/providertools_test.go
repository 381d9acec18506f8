package profiles

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/tools"
)

// A profile offering web search and computer use (with a tool registered
// to run it) puts them in every request's options; the Anthropic encoder
// sends them typed, with the computer tool's display size, the per-tool
// mark on a registered tool, and the original profile is unchanged.
func TestOfferProviderTools(t *testing.T) {
	computer := tools.Tool{Name: "computer", Description: "screen", Parameters: json.RawMessage(`{"type":"object"}`),
		Run: func(context.Context, tools.Call) (tools.Output, error) { return tools.Output{Text: "ok"}, nil }}
	base := Anthropic("claude-sonnet-4-5", WithTools(computer))
	p, err := base.OfferProviderTools(
		llm.ToolDefinition{Name: "web_search", Provider: &llm.ProviderTool{Type: "web_search_20250305", Params: map[string]any{"max_uses": 2}}},
		llm.ToolDefinition{Name: "computer", Provider: &llm.ProviderTool{Type: "computer_20250124",
			Params: map[string]any{"display_width_px": 1024, "display_height_px": 768}}},
		llm.ToolDefinition{Name: "shell", Cache: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(base.ProviderTools()) != 0 {
		t.Fatal("OfferProviderTools changed the profile it was called on")
	}
	req := llm.Request{Model: p.Model(), Messages: []llm.Message{llm.UserMessage("hi")}, Tools: p.Tools(), ProviderOptions: p.ProviderOptions("")}
	var enc anthropic.Encoder
	body, betas, err := enc.Encode(req, false)
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatal(err)
	}
	byName := map[string]map[string]any{}
	for _, tool := range w.Tools {
		byName[tool["name"].(string)] = tool
	}
	if byName["web_search"]["type"] != "web_search_20250305" || byName["web_search"]["max_uses"] != 2.0 {
		t.Errorf("web_search %v", byName["web_search"])
	}
	if c := byName["computer"]; c["type"] != "computer_20250124" || c["display_width_px"] != 1024.0 || c["input_schema"] != nil {
		t.Errorf("computer %v: want the typed tool in place of the registered schema", c)
	}
	if byName["shell"]["cache_control"] == nil {
		t.Errorf("shell %v has no cache mark", byName["shell"])
	}
	if len(betas) == 0 || betas[len(betas)-1] != "computer-use-2025-01-24" {
		t.Errorf("betas %v", betas)
	}
}

// Refusals say what is wrong: a client-run tool nothing runs, another
// provider's tool, a tool without a type.
func TestOfferProviderToolsRefused(t *testing.T) {
	p := Anthropic("claude-sonnet-4-5")
	for _, c := range []struct {
		def  llm.ToolDefinition
		want string
	}{
		{llm.ToolDefinition{Name: "str_replace_based_edit_tool", Provider: &llm.ProviderTool{Type: "text_editor_20250728"}}, "no tool of that name is registered"},
		{llm.ToolDefinition{Name: "g", Provider: &llm.ProviderTool{Provider: "gemini", Type: "google_search"}}, "is a gemini tool"},
		{llm.ToolDefinition{Name: "web_search", Provider: &llm.ProviderTool{}}, "has no type"},
		{llm.ToolDefinition{Name: "nothing"}, "no provider_tool"},
	} {
		if _, err := p.OfferProviderTools(c.def); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.def, err, c.want)
		}
	}
	g, err := Gemini("gemini-2.5-pro").OfferProviderTools(llm.ToolDefinition{Provider: &llm.ProviderTool{Type: "google_search"}})
	if err != nil {
		t.Fatal(err)
	}
	if opts := g.ProviderOptions(""); opts["gemini"]["tools"] == nil {
		t.Errorf("gemini options %v carry no tools", opts)
	}
}
