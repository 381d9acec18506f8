package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentfleet/agentfleet/tools/mcp"
)

// loopback lets the tests' servers on 127.0.0.1 be reached.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// TestRedirectToAnotherOriginCarriesNoSecret: an HTTP MCP server that
// redirects to a second origin must not hand that origin the secret
// header. On a2e22f4 the header was added to every request, redirects
// included, and the second server received it. The second origin is on
// the allowlist here, so the redirect is followed, without the header.
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
		mcp.Options{Env: b.env, Secrets: mcp.Secrets{Values: map[string]string{"REMOTE_TOKEN": "s3cret"}},
			HTTPAllow: []string{other.URL}, AllowPrivate: loopback})
	defer func() { _ = c.Close() }()
	if got, _ := leaked.Load().(string); got != "" {
		t.Fatalf("the second origin received Authorization %q", got)
	}
	if reached.Load() == nil {
		t.Fatal("the redirect was not followed at all, so the probe proves nothing")
	}
}

// TestRedirectOffTheAllowlistIsRefused: a redirect to an origin that is
// neither the server's nor on the allowlist is not followed at all, and
// a server on a private address is refused without allow-private.
func TestRedirectOffTheAllowlistIsRefused(t *testing.T) {
	var reached atomic.Bool
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Store(true) }))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	b := setup(t)
	c, errs := mcp.Start(context.Background(), []mcp.ServerConfig{{Name: "remote", URL: first.URL + "/mcp", StartTimeout: 10 * time.Second}},
		mcp.Options{Env: b.env, AllowPrivate: loopback})
	_ = c.Close()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "not on the allowlist") {
		t.Fatalf("start errors = %v, want the redirect refused", errs)
	}
	if reached.Load() {
		t.Fatal("the origin off the allowlist was reached")
	}
	c, errs = mcp.Start(context.Background(), []mcp.ServerConfig{{Name: "remote", URL: first.URL + "/mcp", StartTimeout: 10 * time.Second}},
		mcp.Options{Env: b.env})
	_ = c.Close()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "loopback") {
		t.Fatalf("start errors = %v, want the loopback address refused", errs)
	}
}
