package openai

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/internal/golden"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// The Responses API's own web search tool goes beside the functions as
// {"type":"web_search", <params>}, here offered through the provider
// options as a profile would.
func TestProviderToolsGolden(t *testing.T) {
	req := llm.Request{Model: "gpt-5.2", Messages: []llm.Message{llm.UserMessage("what changed in Go 1.26?")},
		Tools: []llm.ToolDefinition{{Name: "shell", Description: "run", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)}},
		ProviderOptions: llm.ProviderOptions{"openai": {"tools": []llm.ToolDefinition{{Provider: &llm.ProviderTool{Type: "web_search",
			Params: map[string]any{"search_context_size": "low", "filters": map[string]any{"allowed_domains": []string{"go.dev"}},
				"user_location": map[string]any{"type": "approximate", "country": "DE"}}}}}}}}
	body, err := BuildRequest(req, false)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "provider_tools.golden.json"), llmtest.IndentJSON(body))
	if !strings.Contains(string(body), `{"filters":{"allowed_domains":["go.dev"]},"search_context_size":"low","type":"web_search","user_location":{"country":"DE","type":"approximate"}}`) {
		t.Errorf("web_search tool not as documented: %s", body)
	}
	req.Tools = append(req.Tools, llm.ToolDefinition{Name: "web_search", Provider: &llm.ProviderTool{Provider: "anthropic", Type: "web_search_20250305"}})
	if _, err := BuildRequest(req, false); err == nil || !strings.Contains(err.Error(), "anthropic tool") {
		t.Errorf("an anthropic tool sent to OpenAI: %v", err)
	}
}

// A web_search_call output item is content (KindServerTool with its JSON),
// not a call; the message after it is the answer.
func TestWebSearchCallIsContent(t *testing.T) {
	resp, err := ParseResponse([]byte(`{"id":"resp_1","model":"gpt-5.2","status":"completed","output":[` +
		`{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"Go 1.26 release notes"}},` +
		`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Go 1.26 adds new(expr)."}]}],` +
		`"usage":{"input_tokens":900,"output_tokens":40}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls()) != 0 || resp.FinishReason.Reason != llm.FinishStop || resp.Text() != "Go 1.26 adds new(expr)." {
		t.Fatalf("calls %v, finish %+v, text %q", resp.ToolCalls(), resp.FinishReason, resp.Text())
	}
	p := resp.Message.Content[0]
	if p.Kind != llm.KindServerTool || p.ServerTool.Type != "web_search_call" || p.ServerTool.ID != "ws_1" ||
		!strings.Contains(string(p.ServerTool.Input), "Go 1.26 release notes") || p.Provider != ProviderName {
		t.Fatalf("part %+v", p)
	}
}
