package mcp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/tools/mcp"
	"github.com/agentfleet/agentfleet/tools/mcp/mcptest"
)

// TestEverythingServerOverSSE: the reference server in its sse mode
// speaks only HTTP+SSE (a POST to its /sse is 404). On 100ab44 starting
// it failed with that 404; now the default transport falls back, and
// pinning sse connects directly, while pinning streamable-http still
// fails.
func TestEverythingServerOverSSE(t *testing.T) {
	base := mcptest.Serve(t, mcptest.Everything, "sse")
	for _, transport := range []string{"", mcp.TransportSSE} {
		t.Run("transport="+transport, func(t *testing.T) {
			b := setup(t)
			c, errs := mcp.Start(context.Background(), []mcp.ServerConfig{{Name: "everything", URL: base + "/sse",
				Transport: transport, StartTimeout: time.Minute}}, mcp.Options{Env: b.env, AllowPrivate: loopback})
			defer func() { _ = c.Close() }()
			if len(errs) > 0 {
				t.Fatal(errs[0])
			}
			c.Register(b.reg)
			if _, ok := b.reg.Get("mcp__everything__echo"); !ok {
				t.Fatalf("no mcp__everything__echo among %v", b.reg.Names())
			}
			res := b.call("mcp__everything__echo", `{"message":"hello over sse"}`)
			if res.IsError || !strings.Contains(res.Content, "hello over sse") {
				t.Fatalf("echo = %+v", res)
			}
		})
	}
	b := setup(t)
	c, errs := mcp.Start(context.Background(), []mcp.ServerConfig{{Name: "everything", URL: base + "/sse",
		Transport: mcp.TransportStreamable, StartTimeout: time.Minute}}, mcp.Options{Env: b.env, AllowPrivate: loopback})
	_ = c.Close()
	if len(errs) != 1 {
		t.Fatalf("start errors = %v, want the pinned streamable-HTTP transport to fail on an SSE-only server", errs)
	}
}

// TestSSEServerGetsHeadersAndNotifications: the secret header goes with
// the stream's GET and every message POST, and a tools/list_changed
// notification arriving on the stream reaches the registry.
func TestSSEServerGetsHeadersAndNotifications(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]string{} // method -> Authorization of its last request
	srv := testServer()
	h := sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Method] = r.Header.Get("Authorization")
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	b := setup(t)
	c, errs := mcp.Start(context.Background(), []mcp.ServerConfig{{Name: "remote", URL: ts.URL + "/sse",
		Headers: map[string]string{"Authorization": "Bearer ${secret:T}"}}},
		mcp.Options{Env: b.env, Secrets: mcp.Secrets{Values: map[string]string{"T": "s3cret"}}, AllowPrivate: loopback})
	defer func() { _ = c.Close() }()
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	c.Register(b.reg)
	if res := b.call("mcp__remote__echo", `{"text":"legacy"}`); res.IsError || res.Content != "echo: legacy" {
		t.Fatalf("echo = %+v", res)
	}
	mu.Lock()
	if seen["GET"] != "Bearer s3cret" || seen["POST"] != "Bearer s3cret" {
		t.Errorf("Authorization seen by method = %v, want the secret on GET and POST", seen)
	}
	mu.Unlock()
	sdk.AddTool(srv, &sdk.Tool{Name: "late", Description: "Added later."}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late"}}}, nil, nil
	})
	testenv.Eventually(t, 10*time.Second, "mcp__remote__late registered", func() bool {
		_, ok := b.reg.Get("mcp__remote__late")
		return ok
	})
}

// TestSSEEndpointOnAnotherOriginIsRefused: an endpoint event that names
// another origin is refused before any message is sent, with an error
// saying so; the other origin is never reached, even when it is on the
// allowlist, and gets no header.
func TestSSEEndpointOnAnotherOriginIsRefused(t *testing.T) {
	var reached atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Store(true) }))
	defer other.Close()
	legacy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			http.Error(w, "not here", http.StatusNotFound) // what an SSE-only server answers a streamable POST
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "event: endpoint\ndata: %s/message?session=1\n\n", other.URL)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer legacy.Close()
	for _, transport := range []string{"", mcp.TransportSSE} {
		b := setup(t)
		c, errs := mcp.Start(context.Background(), []mcp.ServerConfig{{Name: "legacy", URL: legacy.URL + "/sse", Transport: transport,
			Headers: map[string]string{"Authorization": "Bearer ${secret:T}"}, StartTimeout: 10 * time.Second}},
			mcp.Options{Env: b.env, Secrets: mcp.Secrets{Values: map[string]string{"T": "s3cret"}},
				HTTPAllow: []string{other.URL}, AllowPrivate: loopback})
		_ = c.Close()
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "on another origin than the server's") ||
			!strings.Contains(errs[0].Error(), other.URL) {
			t.Fatalf("transport %q: start errors = %v, want the endpoint on another origin refused", transport, errs)
		}
	}
	if reached.Load() {
		t.Fatal("the other origin was sent a message")
	}
}

// TestSSEFallbackOnlyOnRefusal: a streamable-HTTP server that fails the
// initialize for another reason (a 500) is not retried over SSE, so its
// own error is the one reported.
func TestSSEFallbackOnlyOnRefusal(t *testing.T) {
	var gets atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.Add(1)
		}
		http.Error(w, "broken", http.StatusInternalServerError)
	}))
	defer ts.Close()
	b := setup(t)
	c, errs := mcp.Start(context.Background(), []mcp.ServerConfig{{Name: "broken", URL: ts.URL, StartTimeout: 10 * time.Second}},
		mcp.Options{Env: b.env, AllowPrivate: loopback})
	_ = c.Close()
	if len(errs) != 1 || strings.Contains(errs[0].Error(), "HTTP+SSE") {
		t.Fatalf("start errors = %v, want the streamable-HTTP failure alone", errs)
	}
	if gets.Load() != 0 {
		t.Fatalf("%d SSE GETs after a 500, want none", gets.Load())
	}
}

// TestSSEFallbackThatFailsSaysBoth: a URL that is neither (404 to the
// POST and to the GET) reports both attempts.
func TestSSEFallbackThatFailsSaysBoth(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	defer ts.Close()
	b := setup(t)
	c, errs := mcp.Start(context.Background(), []mcp.ServerConfig{{Name: "nothing", URL: ts.URL + "/mcp", StartTimeout: 10 * time.Second}},
		mcp.Options{Env: b.env, AllowPrivate: loopback})
	_ = c.Close()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "404 Not Found, and the HTTP+SSE transport failed too") ||
		!strings.Contains(errs[0].Error(), "GET was answered 404") {
		t.Fatalf("start errors = %v", errs)
	}
}
