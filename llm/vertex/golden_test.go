package vertex_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/agentfleet/agentfleet/internal/golden"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// TestRequestBodiesGolden: the body each model family sends through the
// real client for llmtest.GoldenRequest, streamed, as the loopback server
// receives it, kept in testdata/request_<family>.golden.json (rewrite
// with -update). Gemini 3 takes the response schema beside the tools;
// Claude gets the Messages body without model, with anthropic_version and
// the format as a forced answer tool.
func TestRequestBodiesGolden(t *testing.T) {
	for _, c := range []struct{ family, model string }{
		{"gemini", "gemini-3-pro-preview"},
		{"claude", "claude-sonnet-4-5@20250929"},
	} {
		t.Run(c.family, func(t *testing.T) {
			f := &fakeVertex{answer: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadRequest) }}
			cl, _ := newClient(t, f)
			// The answer is refused on purpose: only the body sent matters.
			if _, _, err := llmtest.Collect(cl.Stream(context.Background(), llmtest.GoldenRequest(c.model))); err == nil {
				t.Fatal("the refused call succeeded")
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if len(f.raw) != 1 {
				t.Fatalf("%d requests, want 1", len(f.raw))
			}
			golden.Check(t, filepath.Join("testdata", "request_"+c.family+".golden.json"), llmtest.IndentJSON(f.raw[0]))
		})
	}
}
