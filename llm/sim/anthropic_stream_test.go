package sim

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/internal/golden"

	"github.com/agentfleet/agentfleet/llm"
)

// TestAnthropicStreamGolden pins the exact bytes of streamed Anthropic
// replies (every block kind, characters JSON escapes, invalid arguments,
// invalid UTF-8, chunking, cache usage) so the hand-written event encoding
// stays what encoding/json wrote. Run with -update to rewrite.
func TestAnthropicStreamGolden(t *testing.T) {
	replies := []Reply{
		{ID: "msg_1", Text: "Let me look at it.", Reasoning: "I should read the file first.", ReasoningSignature: "sig+/=",
			ToolCalls: []ToolCallReply{
				{ID: "toolu_1", Name: "read_file", Arguments: `{"path": "a.go", "n": [1, 2]}`},
				{ID: "toolu_2", Name: "shell", Arguments: `not json <&>`},
				{ID: "toolu_3", Name: "glob"},
			},
			Usage: llm.Usage{InputTokens: 120, OutputTokens: 30, CacheReadTokens: 100, CacheWriteTokens: 10}, ChunkSize: 5},
		{ID: "msg_2", Text: "<a href=\"x\">&amp;</a>\n\ttab \u2028\u2029 é 日本 \x00\x1f\b\f\r\x7f \xff\xfe end\\", Reasoning: "no signature given",
			Usage: llm.Usage{InputTokens: 5, OutputTokens: 7}},
		{ID: "msg_3", FinishReason: "max_tokens", Usage: llm.Usage{InputTokens: 3, CacheReadTokens: 9}},
		{ID: "msg_4", ReasoningSignature: "only-a-signature", Text: "done"},
	}
	body := []byte(`{"model":"claude-<test>","stream":true}`)
	var got strings.Builder
	for _, rep := range replies {
		srv := New()
		srv.Enqueue(rep)
		w := httptest.NewRecorder()
		srv.ServeBody(w, httptest.NewRequest(http.MethodPost, "/v1/messages", nil), body)
		srv.Close()
		got.WriteString(w.Body.String())
	}
	golden.Check(t, filepath.Join("testdata", "anthropic_stream.golden"), []byte(got.String()))
}
