package bedrock_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/agentfleet/agentfleet/internal/golden"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// TestRequestBodyGolden: the InvokeModelWithResponseStream body the real
// client signs and sends for llmtest.GoldenRequest, as the loopback server
// receives it, kept in testdata/request_claude.golden.json (rewrite with
// -update): the Messages body without model and stream, with
// anthropic_version, the response format as a forced answer tool.
func TestRequestBodyGolden(t *testing.T) {
	f := &fakeBedrock{t: t, answer: func(w http.ResponseWriter, _ bool) { w.WriteHeader(http.StatusBadRequest) }}
	c := newClient(t, f)
	// The answer is refused on purpose: only the body sent matters.
	if _, _, err := llmtest.Collect(c.Stream(context.Background(), llmtest.GoldenRequest(testModel))); err == nil {
		t.Fatal("the refused call succeeded")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.raw) != 1 || len(f.bad) > 0 {
		t.Fatalf("%d requests (want 1), signature problems %v", len(f.raw), f.bad)
	}
	golden.Check(t, filepath.Join("testdata", "request_claude.golden.json"), llmtest.IndentJSON(f.raw[0]))
}
