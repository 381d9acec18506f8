package sim

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
)

// BenchmarkAnthropicStream serves one streamed Anthropic reply as the fleet
// benchmark's model does (a short text, then a tool call) into a recorder:
// head parsing, event encoding and SSE framing, without the network.
func BenchmarkAnthropicStream(b *testing.B) {
	body := []byte(`{"model":"claude-sonnet-4-5","max_tokens":8192,"messages":[{"role":"user","content":[{"type":"text","text":"task"}]}],"stream":true}`)
	for _, rep := range []struct {
		name string
		rep  Reply
	}{
		{"text", Reply{Text: "done", Usage: llm.Usage{InputTokens: 100, OutputTokens: 10}}},
		{"tool", Reply{Usage: llm.Usage{InputTokens: 100, OutputTokens: 10},
			ToolCalls: []ToolCallReply{{ID: "toolu_bench_0", Name: "glob", Arguments: `{"pattern":"*.none"}`}}}},
	} {
		b.Run(rep.name, func(b *testing.B) {
			srv := New()
			defer srv.Close()
			srv.SetDefault(rep.rep)
			r := httptest.NewRequest(http.MethodPost, "/v1/messages", nil)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				srv.ServeBody(w, r, body)
				if !strings.Contains(w.Body.String(), "message_stop") {
					b.Fatalf("no message_stop in %s", w.Body)
				}
				srv.mu.Lock()
				srv.requests = srv.requests[:0]
				srv.mu.Unlock()
			}
		})
	}
}
