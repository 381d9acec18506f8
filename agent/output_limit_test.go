package agent_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/chatcompat"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// cutFormat is one wire format: the provider row, the dialect's word for
// "the output limit stopped me", and the request field that carries the limit.
type cutFormat struct {
	p      provider
	finish string
	field  string
}

func cutFormats() []cutFormat {
	chat := provider{"chatcompat", "gpt-4o-mini", func(t *testing.T, url string) llm.Client {
		c, err := chatcompat.New(chatcompat.Config{BaseURL: url + "/v1", APIKey: "sk-test", Retry: fastRetry()})
		must(t, err)
		return c
	}}
	return []cutFormat{
		{providers[0], "max_output_tokens", "max_output_tokens"}, // OpenAI Responses: status incomplete
		{providers[1], "max_tokens", "max_tokens"},               // Anthropic Messages
		{providers[2], "MAX_TOKENS", "maxOutputTokens"},          // Gemini generateContent
		{chat, "length", "max_tokens"},                           // Chat Completions
	}
}

// cutWrite is a write_file call whose arguments stop mid-string, as an
// answer cut by the output limit leaves them.
func cutWrite(w *world, finish string) sim.Reply {
	whole := w.write("big.txt", strings.Repeat("line\n", 200))
	whole.Arguments = whole.Arguments[:len(whole.Arguments)/2]
	return sim.Reply{ToolCalls: []sim.ToolCallReply{whole}, FinishReason: finish, Usage: llm.Usage{InputTokens: 100, OutputTokens: 1000}}
}

func limitIn(t *testing.T, body, field string) int {
	t.Helper()
	var m map[string]any
	must(t, json.Unmarshal([]byte(body), &m))
	if gc, ok := m["generationConfig"].(map[string]any); ok {
		m = gc
	}
	n, ok := m[field].(float64)
	if !ok {
		t.Fatalf("request has no %s field", field)
	}
	return int(n)
}

// A tool call cut by the output limit is asked for again once with the
// model's maximum, on every wire format; the cut answer is paid for.
func TestCutToolCallRetriedWithLargerLimit(t *testing.T) {
	for _, f := range cutFormats() {
		t.Run(f.p.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, f.p, agent.Config{Session: agent.SessionConfig{MaxOutputTokens: 1000}})
			whole := w.write("big.txt", "all of it\n")
			w.script(cutWrite(w, f.finish), sim.Reply{ToolCalls: []sim.ToolCallReply{whole}, Usage: llm.Usage{InputTokens: 100, OutputTokens: 50}}, sim.Text("done"))
			w.submit("write big.txt")
			if got := limitIn(t, w.body(0), f.field); got != 1000 {
				t.Fatalf("first request limit %d, want the session's 1000", got)
			}
			if got := limitIn(t, w.body(1), f.field); got <= 1000 {
				t.Fatalf("retry limit %d, want the model's maximum", got)
			}
			if got := w.file("big.txt"); got != "all of it\n" {
				t.Fatalf("big.txt = %q", got)
			}
			for _, turn := range w.s.History() {
				if turn.Kind == agent.TurnAssistant && len(turn.ToolCalls) > 0 && turn.Usage.OutputTokens != 1050 {
					t.Fatalf("the recorded answer has %d output tokens, want both calls' 1050", turn.Usage.OutputTokens)
				}
			}
			if r := w.result(whole.ID); r.IsError {
				t.Fatalf("retried call failed: %s", r.Content)
			}
		})
	}
}

// When the model allows no more, the cut call is not run and the model is
// told plainly to split the work, never that its JSON is invalid.
func TestCutToolCallAtModelMaximumToldToSplit(t *testing.T) {
	for _, f := range cutFormats() {
		t.Run(f.p.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, f.p, agent.Config{Session: agent.SessionConfig{MaxOutputTokens: 10_000_000}})
			cut := cutWrite(w, f.finish)
			w.script(cut, sim.Text("I will write it in parts"))
			w.submit("write big.txt")
			if n := len(w.srv.Requests()); n != 2 {
				t.Fatalf("%d model requests, want 2 (no retry at the model's maximum)", n)
			}
			r := w.result(cut.ToolCalls[0].ID)
			if !r.IsError || strings.Contains(r.Content, "not valid JSON") {
				t.Fatalf("result = %+v", r)
			}
			contains(t, "cut result", r.Content, "hit the output-token limit")
			contains(t, "cut result", r.Content, "write a large file in parts")
			contains(t, "cut result", r.Content, fmt.Sprint(1000))
			contains(t, "second request", w.body(1), "write a large file in parts")
		})
	}
}

// The limit sent: the session's, else the operator's, within the model's
// maximum; for a model the table does not know, nothing unless configured.
func TestOutputLimitSent(t *testing.T) {
	for _, c := range []struct {
		name              string
		model             string
		session, operator int
		want              int
	}{
		{"known model, defaults", "claude-sonnet-4-5", 0, 0, agent.DefaultMaxOutputTokens},
		{"operator default", "claude-sonnet-4-5", 0, 20_000, 20_000},
		{"session within operator", "claude-sonnet-4-5", 4_000, 20_000, 4_000},
		{"lowered to the model's maximum", "claude-3-5-haiku-20241022", 50_000, 0, 8_192},
		{"unknown model, nothing set", "local-llama", 0, 0, 0},
		{"unknown model, session set", "local-llama", 3_000, 0, 3_000},
	} {
		t.Run(c.name, func(t *testing.T) {
			client := newFakeClient(step{text: "ok"})
			b := setup(t, agent.Config{Model: c.model, DefaultMaxOutputTokens: c.operator,
				Session: agent.SessionConfig{MaxOutputTokens: c.session}}, client)
			if _, err := b.s.Submit(ctx30(t), "hi"); err != nil {
				t.Fatal(err)
			}
			if got := client.Requests()[0].MaxOutputTokens; got != c.want {
				t.Fatalf("max_output_tokens %d, want %d", got, c.want)
			}
		})
	}
}
