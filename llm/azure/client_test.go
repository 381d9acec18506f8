package azure_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/azure"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

func target(api string) llmtest.Target {
	return llmtest.Target{Model: "my-gpt-deployment", NoReasoningSignature: api == "chat",
		New: func(t testing.TB, serverURL string, retry llm.RetryPolicy) llm.Client {
			c, err := azure.New(azure.Config{Endpoint: serverURL, APIKey: "az-key", API: api, Retry: retry})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}}
}

// The conformance suite through the simulated provider, on both routes.
func TestConformanceChat(t *testing.T)      { llmtest.Exercise(t, target("chat")) }
func TestConformanceResponses(t *testing.T) { llmtest.Exercise(t, target("responses")) }

// TestDocumentedRequests: a loopback server checks each route as Azure's
// data-plane reference gives it: the deployment path with api-version, or
// the v1 responses path without; the key in api-key, never Authorization.
func TestDocumentedRequests(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/responses") {
			_, _ = io.WriteString(w, `{"id":"resp_1","model":"gpt-5","status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hi"}]}],"usage":{"input_tokens":3,"output_tokens":1}}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"c1","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	endpoint := "http://" + ln.Addr().String()
	req := llm.Request{Model: "prod gpt", Messages: []llm.Message{llm.UserMessage("hello")}}
	for _, c := range []struct{ api, version, path, query string }{
		{"chat", "", "/openai/deployments/prod%20gpt/chat/completions", "api-version=" + azure.DefaultAPIVersion},
		{"chat", "2025-04-01-preview", "/openai/deployments/prod%20gpt/chat/completions", "api-version=2025-04-01-preview"},
		{"responses", "", "/openai/v1/responses", ""},
	} {
		cl, err := azure.New(azure.Config{Endpoint: endpoint + "/", APIKey: "az-key", API: c.api, APIVersion: c.version})
		if err != nil {
			t.Fatal(err)
		}
		resp, err := cl.Complete(context.Background(), req)
		if err != nil || resp.Text() != "hi" {
			t.Fatalf("%s: %v, %v", c.api, resp, err)
		}
		mu.Lock()
		r := got[len(got)-1]
		mu.Unlock()
		if r.URL.EscapedPath() != c.path || r.URL.RawQuery != c.query {
			t.Errorf("%s: %s?%s, want %s?%s", c.api, r.URL.EscapedPath(), r.URL.RawQuery, c.path, c.query)
		}
		if r.Header.Get("api-key") != "az-key" || r.Header.Get("Authorization") != "" {
			t.Errorf("%s: api-key %q, Authorization %q", c.api, r.Header.Get("api-key"), r.Header.Get("Authorization"))
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  azure.Config
		want string
	}{
		{azure.Config{APIKey: "k"}, "Endpoint is empty"},
		{azure.Config{Endpoint: "https://r.openai.azure.com"}, "AZURE_OPENAI_API_KEY"},
		{azure.Config{Endpoint: "https://r.openai.azure.com", APIKey: "k", API: "assistants"}, "not chat or responses"},
	} {
		if _, err := azure.New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
}
