package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfleet/agentfleet/tools/mcp"
)

// TestRedirectToAnotherOriginCarriesNoSecret: an HTTP MCP server that
// redirects to a second origin must not hand that origin the secret
// header. On a2e22f4 the header was added to every request, redirects
// included, and the second server received it.
func TestRedirectToAnotherOriginCarriesNoSecret(t *testing.T) {
	var leaked, reached atomic.Value
	other := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		reached.Store(true)
		if a := r.Header.Get("Authorization"); a != "" {
			leaked.Store(a)
		}
		return testServer()
	}, nil))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	b := setup(t)
	c, _ := mcp.Start(context.Background(), []mcp.ServerConfig{{Name: "remote", URL: first.URL + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer ${secret:REMOTE_TOKEN}"}}},
		mcp.Options{Env: b.env, Secrets: mcp.Secrets{Values: map[string]string{"REMOTE_TOKEN": "s3cret"}}})
	defer c.Close()
	if got, _ := leaked.Load().(string); got != "" {
		t.Fatalf("the second origin received Authorization %q", got)
	}
	if reached.Load() == nil {
		t.Fatal("the redirect was not followed at all, so the probe proves nothing")
	}
}
