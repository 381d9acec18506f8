package anthropic

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/internal/golden"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// providerToolsRequest offers a custom tool, web search with its limits,
// computer use with its display (and a cache breakpoint of its own) and
// the text editor, the last through the provider options as a profile
// would.
func providerToolsRequest() llm.Request {
	return llm.Request{Model: "claude-sonnet-4-5", MaxOutputTokens: 1024,
		Messages: []llm.Message{llm.SystemMessage("be brief"), llm.UserMessage("what changed in Go 1.26?")},
		Tools: []llm.ToolDefinition{
			{Name: "shell", Description: "run a command", Parameters: json.RawMessage(`{"type":"object","properties":{"cmd":{"type":"string"}}}`)},
			{Name: "web_search", Provider: &llm.ProviderTool{Provider: "anthropic", Type: "web_search_20250305", Params: map[string]any{
				"max_uses": 3, "allowed_domains": []string{"go.dev"},
				"user_location": map[string]any{"type": "approximate", "country": "DE", "timezone": "Europe/Berlin"}}}},
			{Name: "computer", Cache: true, Provider: &llm.ProviderTool{Provider: "anthropic", Type: "computer_20250124",
				Params: map[string]any{"display_width_px": 1280, "display_height_px": 800, "display_number": 1}}},
		},
		ProviderOptions: llm.ProviderOptions{"anthropic": {"tools": []any{
			map[string]any{"name": "str_replace_based_edit_tool", "provider_tool": map[string]any{"type": "text_editor_20250728", "params": map[string]any{"max_characters": 10000}}},
			map[string]any{"name": "shell", "cache": true},
		}}},
	}
}

// The body offers each provider tool as {type, name, params}, no schema;
// the per-tool marks (computer, and shell through the options) are sent
// with the automatic ones, and computer use adds its beta.
func TestProviderToolsGolden(t *testing.T) {
	var enc Encoder
	body, betas, err := enc.Encode(providerToolsRequest(), false)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "provider_tools.golden.json"), llmtest.IndentJSON(body))
	if len(betas) != 1 || betas[0] != "computer-use-2025-01-24" {
		t.Errorf("betas %v, want computer-use-2025-01-24", betas)
	}
	var w struct {
		Tools []map[string]any `json:"tools"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatal(err)
	}
	if len(w.Tools) != 4 {
		t.Fatalf("%d tools, want shell, web_search, computer, str_replace_based_edit_tool", len(w.Tools))
	}
	for _, tool := range w.Tools {
		_, cached := tool["cache_control"]
		wantCached := tool["name"] == "shell" || tool["name"] == "computer" || tool["name"] == "str_replace_based_edit_tool"
		if cached != wantCached {
			t.Errorf("tool %v: cache_control %v, want %v", tool["name"], cached, wantCached)
		}
	}
	if w.Tools[2]["display_width_px"] != 1280.0 || w.Tools[2]["type"] != "computer_20250124" || w.Tools[2]["input_schema"] != nil {
		t.Errorf("computer tool %v", w.Tools[2])
	}
}

// Another provider's tool, or too many per-tool marks, are refused.
func TestProviderToolsRefused(t *testing.T) {
	var enc Encoder
	req := providerToolsRequest()
	req.Tools = append(req.Tools, llm.ToolDefinition{Name: "search", Provider: &llm.ProviderTool{Provider: "gemini", Type: "google_search"}})
	if _, _, err := enc.Encode(req, false); err == nil || !strings.Contains(err.Error(), "is a gemini tool") {
		t.Errorf("a gemini tool: %v", err)
	}
	req = providerToolsRequest()
	for i := range 5 {
		req.Tools = append(req.Tools, llm.ToolDefinition{Name: "t" + string(rune('a'+i)), Cache: true})
	}
	if _, _, err := enc.Encode(req, false); err == nil || !strings.Contains(err.Error(), "cache breakpoint") {
		t.Errorf("seven marks: %v", err)
	}
}

const webSearchAnswer = `{"id":"msg_ws","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[` +
	`{"type":"text","text":"Let me look."},` +
	`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"Go 1.26 release notes"}},` +
	`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes","encrypted_content":"EqgfCiox","page_age":null}]},` +
	`{"type":"text","text":"Go 1.26 adds new(expr)."}],` +
	`"stop_reason":"end_turn","usage":{"input_tokens":2100,"output_tokens":90,"server_tool_use":{"web_search_requests":1}}}`

// A web search answer: the server tool's use and result are content, not
// calls; the text around them is the answer; sent back, both blocks go
// unchanged, in order, in the assistant turn.
func TestServerToolBlocksAreContent(t *testing.T) {
	resp, err := parseResponse([]byte(webSearchAnswer))
	if err != nil {
		t.Fatal(err)
	}
	checkWebSearchAnswer(t, resp)
	next := providerToolsRequest()
	next.Messages = append(next.Messages, resp.Message, llm.UserMessage("thanks"))
	var enc Encoder
	body, _, err := enc.Encode(next, false)
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &w); err != nil {
		t.Fatal(err)
	}
	a := w.Messages[1]
	if a.Role != "assistant" || len(a.Content) != 4 {
		t.Fatalf("assistant turn %s with %d blocks, want 4", a.Role, len(a.Content))
	}
	var in struct {
		Content []json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal([]byte(webSearchAnswer), &in)
	for i := 1; i <= 2; i++ {
		if string(a.Content[i]) != string(in.Content[i]) {
			t.Errorf("block %d sent back as %s, want %s", i, a.Content[i], in.Content[i])
		}
	}
}

func checkWebSearchAnswer(t *testing.T, resp *llm.Response) {
	t.Helper()
	if calls := resp.ToolCalls(); len(calls) != 0 {
		t.Fatalf("server tool blocks became calls to run: %+v", calls)
	}
	if resp.FinishReason.Reason != llm.FinishStop {
		t.Errorf("finish %+v", resp.FinishReason)
	}
	if got := resp.Text(); got != "Let me look.Go 1.26 adds new(expr)." {
		t.Errorf("text %q", got)
	}
	var kinds []string
	for _, p := range resp.Message.Content {
		kinds = append(kinds, string(p.Kind))
	}
	if strings.Join(kinds, ",") != "text,server_tool,server_tool,text" {
		t.Fatalf("parts %v", kinds)
	}
	use, result := resp.Message.Content[1].ServerTool, resp.Message.Content[2].ServerTool
	if use.Type != "server_tool_use" || use.Name != "web_search" || use.ID != "srvtoolu_1" || !strings.Contains(string(use.Input), "Go 1.26 release notes") {
		t.Errorf("use %+v", use)
	}
	if result.Type != "web_search_tool_result" || result.ID != "srvtoolu_1" || !strings.Contains(string(resp.Message.Content[2].Raw), "encrypted_content") {
		t.Errorf("result %+v raw %s", result, resp.Message.Content[2].Raw)
	}
}

// The same answer streamed: the server tool's input arrives as
// input_json_delta, yet no tool call event is emitted and the final
// response holds the same content.
func TestServerToolBlocksStreamed(t *testing.T) {
	var sse strings.Builder
	ev := func(typ, data string) { sse.WriteString("event: " + typ + "\ndata: " + data + "\n\n") }
	ev("message_start", `{"type":"message_start","message":{"id":"msg_ws","model":"claude-sonnet-4-5","content":[],"usage":{"input_tokens":2100,"output_tokens":1}}}`)
	ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me look."}}`)
	ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
	ev("content_block_start", `{"type":"content_block_start","index":1,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}`)
	ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"query\": \"Go 1.26 "}}`)
	ev("content_block_delta", `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"release notes\"}"}}`)
	ev("content_block_stop", `{"type":"content_block_stop","index":1}`)
	ev("content_block_start", `{"type":"content_block_start","index":2,"content_block":{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[{"type":"web_search_result","url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes","encrypted_content":"EqgfCiox"}]}}`)
	ev("content_block_stop", `{"type":"content_block_stop","index":2}`)
	ev("content_block_start", `{"type":"content_block_start","index":3,"content_block":{"type":"text","text":""}}`)
	ev("content_block_delta", `{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"Go 1.26 adds new(expr)."}}`)
	ev("content_block_stop", `{"type":"content_block_stop","index":3}`)
	ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":90}}`)
	ev("message_stop", `{"type":"message_stop"}`)
	events, resp, err := llmtest.Collect(func(yield func(llm.StreamEvent, error) bool) {
		DecodeSSE(strings.NewReader(sse.String()), yield)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Kind == llm.EventToolCallStart || e.Kind == llm.EventToolCallDelta || e.Kind == llm.EventToolCallEnd {
			t.Fatalf("a server tool block emitted %s", e.Kind)
		}
	}
	checkWebSearchAnswer(t, resp)
}

// Through a client and a local server: the request reaches the Messages
// API with the typed tools and the computer use beta in anthropic-beta.
func TestProviderToolsReachTheServer(t *testing.T) {
	var mu sync.Mutex
	var beta string
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		beta, body = r.Header.Get("anthropic-beta"), b
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, webSearchAnswer)
	}))
	defer srv.Close()
	c, err := New(Config{BaseURL: srv.URL, APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Complete(context.Background(), providerToolsRequest())
	if err != nil {
		t.Fatal(err)
	}
	checkWebSearchAnswer(t, resp)
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(beta, "computer-use-2025-01-24") {
		t.Errorf("anthropic-beta %q", beta)
	}
	if !strings.Contains(string(body), `"type":"web_search_20250305"`) || !strings.Contains(string(body), `"max_characters":10000`) {
		t.Errorf("body %s", body)
	}
}
