package anthropic_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/profiles"
)

// BenchmarkStreamRoundTrip is one task of the fleet benchmark seen from the
// adapter: a request carrying a 3 KB system prompt and the anthropic
// profile's tools, streamed from the simulated server over loopback HTTP,
// answered with a short text. It covers encoding, the server's SSE writing
// and the client's SSE decoding (plus net/http, which is not ours).
func BenchmarkStreamRoundTrip(b *testing.B) {
	srv := sim.NewServer()
	defer srv.Close()
	srv.SetDefault(sim.Reply{Text: "done", Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}})
	c, err := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "sk-ant-test",
		Retry: llm.RetryPolicy{MaxAttempts: 1, IdleTimeout: 30 * time.Second}})
	if err != nil {
		b.Fatal(err)
	}
	p := profiles.Anthropic("")
	req := llm.Request{Model: p.Model(), Tools: p.Tools(), ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceAuto}, ProviderOptions: p.ProviderOptions(""),
		Messages: []llm.Message{llm.SystemMessage(strings.Repeat("You are a coding agent. ", 128)), llm.UserMessage("benchmark task")}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		var final *llm.Response
		for ev, err := range c.Stream(ctx, req) {
			if err != nil {
				b.Fatal(err)
			}
			if ev.Kind == llm.EventFinish {
				final = ev.Response
			}
		}
		if final == nil || final.Text() != "done" {
			b.Fatalf("final response %+v, want the text done", final)
		}
	}
}
