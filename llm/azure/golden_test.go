package azure_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/internal/golden"
	"github.com/agentfleet/agentfleet/llm/azure"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// TestRequestBodiesGolden: the streamed body each route sends through the
// real client for llmtest.GoldenRequest, as a loopback server receives
// it, kept in testdata/request_<api>.golden.json (rewrite with -update):
// Chat Completions on the deployment path, Responses on the v1 path.
func TestRequestBodiesGolden(t *testing.T) {
	for _, api := range []string{"chat", "responses"} {
		t.Run(api, func(t *testing.T) {
			var mu sync.Mutex
			var bodies [][]byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				bodies = append(bodies, b)
				mu.Unlock()
				// Refused on purpose: only the body sent matters.
				w.WriteHeader(http.StatusBadRequest)
			}))
			t.Cleanup(srv.Close)
			retry, _ := llmtest.FastRetry(1)
			c, err := azure.New(azure.Config{Endpoint: srv.URL, APIKey: "az-key", API: api, Retry: retry})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := llmtest.Collect(c.Stream(context.Background(), llmtest.GoldenRequest("my-gpt-deployment"))); err == nil {
				t.Fatal("the refused call succeeded")
			}
			mu.Lock()
			defer mu.Unlock()
			if len(bodies) != 1 {
				t.Fatalf("%d requests, want 1", len(bodies))
			}
			golden.Check(t, filepath.Join("testdata", "request_"+api+".golden.json"), llmtest.IndentJSON(bodies[0]))
		})
	}
}
