package anthropic_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// setup starts a simulated provider and a client for it that never retries.
func setup(t *testing.T) (*sim.Server, *anthropic.Client) {
	t.Helper()
	srv := sim.NewServer()
	t.Cleanup(srv.Close)
	c, err := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "sk-ant-test",
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
	return llm.Request{Model: "claude-sonnet-4-5", Messages: []llm.Message{
		llm.SystemMessage("be brief"), llm.UserMessage("hi"),
	}}
}

func TestNewRequiresKey(t *testing.T) {
	_, err := anthropic.New(anthropic.Config{})
	if err == nil || !strings.Contains(err.Error(), "api_key") {
		t.Fatalf("New without a key: got %v, want an error naming the api_key setting", err)
	}
	_, err = anthropic.New(anthropic.Config{APIKey: "k", BaseURL: "ftp://x"})
	if err == nil || !strings.Contains(err.Error(), "BaseURL") {
		t.Fatalf("New with a bad BaseURL: got %v, want an error naming BaseURL", err)
	}
}

func TestCompleteAndStreamAgree(t *testing.T) {
	srv, c := setup(t)
	rep := sim.Reply{
		Text: "Let me look.", Reasoning: "I should call the tool.", ReasoningSignature: "sig-1",
		ToolCalls: []sim.ToolCallReply{{ID: "toolu_1", Name: "read_file", Arguments: `{"path":"a.go"}`}},
		Usage:     llm.Usage{InputTokens: 120, OutputTokens: 30, CacheReadTokens: 100, CacheWriteTokens: 10},
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
		if resp.Text() != "Let me look." || resp.Reasoning() != "I should call the tool." {
			t.Errorf("%s: text %q reasoning %q", name, resp.Text(), resp.Reasoning())
		}
		calls := resp.ToolCalls()
		if len(calls) != 1 || calls[0].ID != "toolu_1" || calls[0].Name != "read_file" || string(calls[0].Arguments) != `{"path":"a.go"}` {
			t.Errorf("%s: tool calls %+v", name, calls)
		}
		if resp.FinishReason.Reason != llm.FinishToolCalls || resp.FinishReason.Raw != "tool_use" {
			t.Errorf("%s: finish %+v", name, resp.FinishReason)
		}
		if resp.Usage != rep.Usage {
			t.Errorf("%s: usage %+v, want %+v", name, resp.Usage, rep.Usage)
		}
		r := resp.Message.Content[0]
		if r.Kind != llm.KindReasoning || r.Reasoning.Signature != "sig-1" || r.Provider != "anthropic" || len(r.Raw) == 0 {
			t.Errorf("%s: reasoning part %+v", name, r)
		}
	}
	var text strings.Builder
	var kinds []llm.StreamEventKind
	for _, ev := range events {
		if ev.Kind == llm.EventTextDelta {
			text.WriteString(ev.Delta)
		}
		if len(kinds) == 0 || kinds[len(kinds)-1] != ev.Kind {
			kinds = append(kinds, ev.Kind)
		}
	}
	if text.String() != "Let me look." {
		t.Errorf("text deltas joined = %q", text.String())
	}
	want := []llm.StreamEventKind{llm.EventReasoningStart, llm.EventReasoningDelta, llm.EventReasoningEnd,
		llm.EventTextStart, llm.EventTextDelta, llm.EventTextEnd,
		llm.EventToolCallStart, llm.EventToolCallDelta, llm.EventToolCallEnd}
	if strings.Join(kindStrings(kinds), ",") != strings.Join(kindStrings(want), ",") {
		t.Errorf("event order %v, want %v", kinds, want)
	}
}

func kindStrings(ks []llm.StreamEventKind) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = string(k)
	}
	return out
}

// TestRoundTripEchoesThinking sends a response back as history and checks
// the wire request: thinking and redacted thinking byte for byte, tool use,
// tool results with is_error, system hoisted, headers.
func TestRoundTripEchoesThinking(t *testing.T) {
	srv, c := setup(t)
	srv.Enqueue(sim.Reply{Text: "ok"})
	ctx := testContext(t)
	thinkingRaw := json.RawMessage(`{"type":"thinking","thinking":"hmm","signature":"c2ln","future_field":1}`)
	redactedRaw := json.RawMessage(`{"type":"redacted_thinking","data":"EmwKAhgB"}`)
	req := llm.Request{
		Model:           "claude-sonnet-4-5",
		ReasoningEffort: "medium",
		MaxOutputTokens: 1000,
		ProviderOptions: llm.ProviderOptions{"anthropic": {"beta_headers": []any{"interleaved-thinking-2025-05-14", "context-1m-2025-08-07"}}},
		Messages: []llm.Message{
			llm.UserMessage("read a.go"),
			llm.SystemMessage("you are terse"),
			{Role: llm.RoleAssistant, Content: []llm.ContentPart{
				{Kind: llm.KindReasoning, Reasoning: &llm.Reasoning{Text: "hmm", Signature: "c2ln"}, Provider: "anthropic", Raw: thinkingRaw},
				{Kind: llm.KindReasoning, Reasoning: &llm.Reasoning{Redacted: true, Data: "EmwKAhgB"}, Provider: "anthropic", Raw: redactedRaw},
				{Kind: llm.KindReasoning, Reasoning: &llm.Reasoning{Text: "openai summary", Signature: "enc"}, Provider: "openai"},
				{Kind: llm.KindToolCall, ToolCall: &llm.ToolCall{ID: "toolu_1", Name: "read_file", Arguments: json.RawMessage(`{"path": "a.go"}`)}},
			}},
			llm.ToolResultMessage(llm.ToolResult{ToolCallID: "toolu_1", Content: "no such file", IsError: true}),
			llm.UserMessage("try again"),
		},
	}
	if _, err := c.Complete(ctx, req); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[0]
	for h, want := range map[string]string{
		"x-api-key": "sk-ant-test", "anthropic-version": anthropic.APIVersion,
		"anthropic-beta": "interleaved-thinking-2025-05-14,context-1m-2025-08-07",
	} {
		if got.Header.Get(h) != want {
			t.Errorf("header %s = %q, want %q", h, got.Header.Get(h), want)
		}
	}
	var body struct {
		MaxTokens int `json:"max_tokens"`
		Thinking  struct {
			Type   string `json:"type"`
			Budget int    `json:"budget_tokens"`
		} `json:"thinking"`
		System   []map[string]any `json:"system"`
		Messages []struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(got.Body, &body); err != nil {
		t.Fatal(err)
	}
	if body.Thinking.Type != "enabled" || body.Thinking.Budget != 4096 || body.MaxTokens != 5096 {
		t.Errorf("thinking %+v max_tokens %d, want budget 4096 and max_tokens 5096", body.Thinking, body.MaxTokens)
	}
	if len(body.System) != 1 || body.System[0]["text"] != "you are terse" {
		t.Errorf("system = %v", body.System)
	}
	if len(body.Messages) != 3 {
		t.Fatalf("got %d messages, want user, assistant, user (tool result merged with the next user text): %s", len(body.Messages), got.Body)
	}
	asst := body.Messages[1].Content
	if len(asst) != 3 || string(asst[0]) != string(thinkingRaw) || string(asst[1]) != string(redactedRaw) {
		t.Errorf("assistant content not echoed exactly: %s", body.Messages[1].Content)
	}
	if !strings.Contains(string(asst[2]), `"input":{"path":"a.go"}`) {
		t.Errorf("tool_use block = %s", asst[2])
	}
	user := body.Messages[2]
	if len(user.Content) != 2 || !strings.Contains(string(user.Content[0]), `"is_error":true`) || !strings.Contains(string(user.Content[0]), `"tool_use_id":"toolu_1"`) {
		t.Errorf("tool result turn = %s", user.Content)
	}
}

func TestThinkingBudgetFromEffort(t *testing.T) {
	cases := []struct {
		effort  string
		opts    llm.ProviderOptions
		budget  int
		wantErr bool
	}{
		{effort: "", budget: 0},
		{effort: "none", budget: 0},
		{effort: "low", budget: 1024},
		{effort: "medium", budget: 4096},
		{effort: "high", budget: 16384},
		{effort: "high", opts: llm.ProviderOptions{"anthropic": {"thinking_budget": 2000.0}}, budget: 2000},
		{effort: "high", opts: llm.ProviderOptions{"anthropic": {"thinking_budget": 0}}, budget: 0},
		{effort: "extreme", wantErr: true},
		{opts: llm.ProviderOptions{"anthropic": {"thinking_budget": "lots"}}, wantErr: true},
	}
	for _, tc := range cases {
		srv, c := setup(t)
		srv.SetDefault(sim.Text("ok"))
		req := basicRequest()
		req.ReasoningEffort, req.ProviderOptions = tc.effort, tc.opts
		_, err := c.Complete(testContext(t), req)
		if tc.wantErr {
			if llm.KindOf(err) != llm.ErrInvalidRequest || len(srv.Requests()) != 0 {
				t.Errorf("effort %q opts %v: got %v, want an invalid_request error before sending", tc.effort, tc.opts, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Thinking *struct {
				Budget int `json:"budget_tokens"`
			} `json:"thinking"`
		}
		_ = json.Unmarshal(srv.Requests()[0].Body, &body)
		got := 0
		if body.Thinking != nil {
			got = body.Thinking.Budget
		}
		if got != tc.budget {
			t.Errorf("effort %q opts %v: budget %d, want %d", tc.effort, tc.opts, got, tc.budget)
		}
	}
}

func TestContextWindowStopReason(t *testing.T) {
	srv, c := setup(t)
	srv.Enqueue(sim.Reply{Text: "partial", FinishReason: "model_context_window_exceeded"})
	resp, err := c.Complete(testContext(t), basicRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason.Reason != llm.FinishContextLength {
		t.Errorf("finish = %+v, want context_length", resp.FinishReason)
	}
}
