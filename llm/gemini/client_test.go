package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/gemini"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// setup starts a simulated provider and a client for it that never retries.
func setup(t *testing.T) (*sim.Server, *gemini.Client) {
	t.Helper()
	srv := sim.NewServer()
	t.Cleanup(srv.Close)
	c, err := gemini.New(gemini.Config{BaseURL: srv.URL(), APIKey: "AIza-test",
		Retry: llm.RetryPolicy{MaxAttempts: 1, IdleTimeout: 30 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func basicRequest() llm.Request {
	return llm.Request{Model: "gemini-2.5-flash", Messages: []llm.Message{
		llm.SystemMessage("be brief"), llm.UserMessage("hi"),
	}}
}

func TestNewRequiresKey(t *testing.T) {
	_, err := gemini.New(gemini.Config{})
	if err == nil || !strings.Contains(err.Error(), "api_key") {
		t.Fatalf("New without a key: got %v, want an error naming the api_key setting", err)
	}
}

func TestCompleteAndStreamAgree(t *testing.T) {
	srv, c := setup(t)
	rep := sim.Reply{
		ID:   "resp-1",
		Text: "Let me look.", Reasoning: "I should call the tools.", ReasoningSignature: "c2lnLTE=",
		ToolCalls: []sim.ToolCallReply{
			{Name: "read_file", Arguments: `{"path":"a.go"}`},
			{Name: "read_file", Arguments: `{"path":"b.go"}`},
		},
		Usage:     llm.Usage{InputTokens: 120, OutputTokens: 30, ReasoningTokens: 20, CacheReadTokens: 100},
		ChunkSize: 4,
	}
	srv.Enqueue(rep, rep)
	ctx := testContext(t)
	whole, err := c.Complete(ctx, basicRequest())
	if err != nil {
		t.Fatal(err)
	}
	events, streamed, err := llmtest.Collect(c.Stream(ctx, basicRequest()))
	if err != nil {
		t.Fatal(err)
	}
	for name, resp := range map[string]*llm.Response{"complete": whole, "stream": streamed} {
		if resp.Text() != "Let me look." || resp.Reasoning() != "I should call the tools." {
			t.Errorf("%s: text %q reasoning %q", name, resp.Text(), resp.Reasoning())
		}
		calls := resp.ToolCalls()
		if len(calls) != 2 || calls[0].ID != "call_resp-1_0" || calls[1].ID != "call_resp-1_1" ||
			string(calls[1].Arguments) != `{"path":"b.go"}` || calls[0].Signature != "c2lnLTE=" || calls[1].Signature != "" {
			t.Errorf("%s: tool calls %+v", name, calls)
		}
		if resp.FinishReason.Reason != llm.FinishToolCalls || resp.FinishReason.Raw != "STOP" {
			t.Errorf("%s: finish %+v", name, resp.FinishReason)
		}
		if resp.Usage != rep.Usage {
			t.Errorf("%s: usage %+v, want %+v", name, resp.Usage, rep.Usage)
		}
	}
	if got := llmtest.Deltas(events, llm.EventTextDelta); got != "Let me look." {
		t.Errorf("text deltas joined = %q", got)
	}
}

// TestRoundTrip sends history back and checks the wire request: the
// thoughtSignature on the same part, names resolved for tool results,
// thought summaries dropped, system instruction, thinking config, safety
// settings, the key header and the streaming URL.
func TestRoundTrip(t *testing.T) {
	srv, c := setup(t)
	srv.Enqueue(sim.Text("done"))
	req := llm.Request{
		Model:           "gemini-2.5-pro",
		ReasoningEffort: "low",
		ProviderOptions: llm.ProviderOptions{"gemini": {"safety_settings": []any{
			map[string]any{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}}}},
		Tools: []llm.ToolDefinition{{Name: "read_file", Description: "Read a file",
			Parameters: json.RawMessage(`{"$schema":"x","type":"object","additionalProperties":false,"properties":{"path":{"type":["string","null"]},"lines":{"type":"array","items":{"type":"integer"}}},"required":["path"]}`)}},
		Messages: []llm.Message{
			llm.SystemMessage("you are terse"),
			llm.UserMessage("read a.go"),
			{Role: llm.RoleAssistant, Content: []llm.ContentPart{
				{Kind: llm.KindReasoning, Reasoning: &llm.Reasoning{Text: "summary only"}, Provider: "gemini"},
				{Kind: llm.KindText, Text: "Reading.", Signature: "dGV4dA==", Provider: "gemini"},
				{Kind: llm.KindToolCall, ToolCall: &llm.ToolCall{ID: "call_r_0", Name: "read_file", Arguments: json.RawMessage(`{"path":"a.go"}`), Signature: "Y2FsbA=="}},
			}},
			llm.ToolResultMessage(llm.ToolResult{ToolCallID: "call_r_0", Content: "no such file", IsError: true}),
		},
	}
	var err error
	for _, err = range c.Stream(testContext(t), req) {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := srv.Requests()[0]
	if got.Header.Get("x-goog-api-key") != "AIza-test" || got.Path != "/v1beta/models/gemini-2.5-pro:streamGenerateContent" || got.Query != "alt=sse" {
		t.Errorf("key %q path %q query %q", got.Header.Get("x-goog-api-key"), got.Path, got.Query)
	}
	want := `{
	  "contents": [
	    {"role": "user", "parts": [{"text": "read a.go"}]},
	    {"role": "model", "parts": [
	      {"text": "Reading.", "thoughtSignature": "dGV4dA=="},
	      {"functionCall": {"id": "call_r_0", "name": "read_file", "args": {"path": "a.go"}}, "thoughtSignature": "Y2FsbA=="}]},
	    {"role": "user", "parts": [{"functionResponse": {"id": "call_r_0", "name": "read_file", "response": {"error": "no such file"}}}]}
	  ],
	  "systemInstruction": {"role": "user", "parts": [{"text": "you are terse"}]},
	  "tools": [{"functionDeclarations": [{"name": "read_file", "description": "Read a file", "parameters": {
	    "type": "OBJECT", "required": ["path"],
	    "properties": {"path": {"type": "STRING", "nullable": true}, "lines": {"type": "ARRAY", "items": {"type": "INTEGER"}}}}}]}],
	  "toolConfig": {"functionCallingConfig": {"mode": "AUTO"}},
	  "generationConfig": {"thinkingConfig": {"thinkingBudget": 1024, "includeThoughts": true}},
	  "safetySettings": [{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_NONE"}]
	}`
	assertJSONEqual(t, got.Body, []byte(want))
}

func assertJSONEqual(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got is not JSON: %v: %s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want is not JSON: %v", err)
	}
	gb, _ := json.MarshalIndent(g, "", " ")
	wb, _ := json.MarshalIndent(w, "", " ")
	if string(gb) != string(wb) {
		t.Errorf("request differs\n got: %s\nwant: %s", gb, wb)
	}
}

func TestThinkingConfig(t *testing.T) {
	cases := []struct {
		model, effort string
		opts          llm.ProviderOptions
		want          string // generationConfig JSON, "" for none
		wantErr       bool
	}{
		{model: "gemini-2.5-flash", want: ""},
		{model: "gemini-2.5-flash", effort: "medium", want: `{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":8192}}`},
		{model: "gemini-2.5-flash", effort: "none", want: `{"thinkingConfig":{"thinkingBudget":0}}`},
		{model: "gemini-3-pro-preview", effort: "high", want: `{"thinkingConfig":{"includeThoughts":true,"thinkingLevel":"HIGH"}}`},
		{model: "gemini-3-pro-preview", effort: "high", opts: llm.ProviderOptions{"gemini": {"include_thoughts": false}},
			want: `{"thinkingConfig":{"thinkingLevel":"HIGH"}}`},
		{model: "gemini-2.5-flash", opts: llm.ProviderOptions{"gemini": {"thinking_budget": 128.0}},
			want: `{"thinkingConfig":{"includeThoughts":true,"thinkingBudget":128}}`},
		{model: "gemini-2.5-flash", effort: "turbo", wantErr: true},
		{model: "gemini-2.5-flash", opts: llm.ProviderOptions{"gemini": {"include_thoughts": "yes"}}, wantErr: true},
	}
	for _, tc := range cases {
		srv, c := setup(t)
		srv.SetDefault(sim.Text("ok"))
		req := basicRequest()
		req.Model, req.ReasoningEffort, req.ProviderOptions = tc.model, tc.effort, tc.opts
		_, err := c.Complete(testContext(t), req)
		if tc.wantErr {
			if llm.KindOf(err) != llm.ErrInvalidRequest || len(srv.Requests()) != 0 {
				t.Errorf("%s %q %v: got %v, want invalid_request before sending", tc.model, tc.effort, tc.opts, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			GenerationConfig json.RawMessage `json:"generationConfig"`
		}
		_ = json.Unmarshal(srv.Requests()[0].Body, &body)
		if string(body.GenerationConfig) != tc.want {
			t.Errorf("%s %q %v: generationConfig %s, want %s", tc.model, tc.effort, tc.opts, body.GenerationConfig, tc.want)
		}
	}
}

func TestToolResultNameMissing(t *testing.T) {
	srv, c := setup(t)
	req := basicRequest()
	req.Messages = append(req.Messages, llm.ToolResultMessage(llm.ToolResult{ToolCallID: "nowhere", Content: "x"}))
	_, err := c.Complete(testContext(t), req)
	if llm.KindOf(err) != llm.ErrInvalidRequest || !strings.Contains(err.Error(), "ToolResult.Name") || len(srv.Requests()) != 0 {
		t.Fatalf("got %v, want invalid_request naming ToolResult.Name", err)
	}
}

func TestCanceledStream(t *testing.T) {
	srv, c := setup(t)
	srv.Enqueue(sim.Reply{Text: "never finishes", ChunkSize: 2, StallAfterChunks: 2})
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	var err error
	for ev, e := range c.Stream(ctx, basicRequest()) {
		if e != nil {
			err = e
			break
		}
		if ev.Kind == llm.EventTextStart {
			cancel() // the server stalls after two chunks; only cancel ends this
		}
	}
	if llm.KindOf(err) != llm.ErrCanceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want canceled by the caller", err)
	}
}
