package llm

import (
	"encoding/json"
	"strings"
	"testing"
)

// ToolsFor merges the provider options' tools by name: a typed entry
// replaces the registered definition of its name, a name with Cache only
// marks it, a new name is added; the JSON shape of a session spec reads
// as the typed one, each ProviderTool defaulting to the provider asked.
func TestToolsForMerges(t *testing.T) {
	var fromJSON any
	if err := json.Unmarshal([]byte(`[
		{"name":"str_replace_based_edit_tool","provider_tool":{"type":"text_editor_20250728","params":{"max_characters":5000}}},
		{"name":"shell","cache":true},
		{"name":"web_search","provider_tool":{"type":"web_search_20250305","params":{"max_uses":2}}}]`), &fromJSON); err != nil {
		t.Fatal(err)
	}
	req := Request{Tools: []ToolDefinition{
		{Name: "shell", Parameters: json.RawMessage(`{"type":"object"}`)},
		{Name: "str_replace_based_edit_tool", Description: "edit", Parameters: json.RawMessage(`{"type":"object"}`)},
	}, ProviderOptions: ProviderOptions{"anthropic": {"tools": fromJSON}}}
	defs, err := ToolsFor(req, "anthropic")
	if err != nil {
		t.Fatal(err)
	}
	if len(defs) != 3 {
		t.Fatalf("%d definitions: %+v", len(defs), defs)
	}
	if !defs[0].Cache || string(defs[0].Parameters) != `{"type":"object"}` || defs[0].Provider != nil {
		t.Errorf("shell %+v: want its own schema with a cache mark", defs[0])
	}
	if p := defs[1].Provider; p == nil || p.Provider != "anthropic" || p.Type != "text_editor_20250728" || p.Params["max_characters"] != 5000.0 {
		t.Errorf("text editor %+v", defs[1])
	}
	if defs[2].Name != "web_search" || !defs[2].Provider.ServerRun() || defs[1].Provider.ServerRun() {
		t.Errorf("web search %+v; server-run: web search yes, text editor no", defs[2])
	}
	if len(req.Tools) != 2 || req.Tools[0].Cache {
		t.Error("ToolsFor changed the request's own tools")
	}
	if _, err := ToolsFor(Request{ProviderOptions: ProviderOptions{"anthropic": {"tools": "web_search"}}}, "anthropic"); err == nil ||
		!strings.Contains(err.Error(), "list of tool definitions") {
		t.Errorf("a string for tools: %v", err)
	}
	if _, err := ToolsFor(Request{Tools: []ToolDefinition{{Name: "x", Provider: &ProviderTool{Provider: "anthropic"}}}}, "anthropic"); err == nil ||
		!strings.Contains(err.Error(), "no type") {
		t.Errorf("a provider tool without a type: %v", err)
	}
}

// Which provider tools run at the provider.
func TestServerRun(t *testing.T) {
	for _, c := range []struct {
		pt   ProviderTool
		want bool
	}{
		{ProviderTool{Provider: "anthropic", Type: "web_search_20250305"}, true},
		{ProviderTool{Provider: "anthropic", Type: "web_fetch_20250910"}, true},
		{ProviderTool{Provider: "anthropic", Type: "code_execution_20250825"}, true},
		{ProviderTool{Provider: "anthropic", Type: "computer_20250124"}, false},
		{ProviderTool{Provider: "anthropic", Type: "text_editor_20250728"}, false},
		{ProviderTool{Provider: "anthropic", Type: "bash_20250124"}, false},
		{ProviderTool{Provider: "openai", Type: "web_search"}, true},
		{ProviderTool{Provider: "openai", Type: "computer_use_preview"}, false},
		{ProviderTool{Provider: "gemini", Type: "google_search"}, true},
	} {
		if got := c.pt.ServerRun(); got != c.want {
			t.Errorf("%+v ServerRun %v, want %v", c.pt, got, c.want)
		}
	}
}
