package dev_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet/dev"
)

// devPost sends a POST /v1/tasks to fl as a web page could, with the
// given content type, token and Host, and returns the status.
func devPost(t *testing.T, fl *dev.Fleet, contentType, token, host string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, fl.URL()+"/v1/tasks", strings.NewReader(`{"prompt":"from a web page"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestDevModeGeneratesToken: dev mode without --token requires a random
// token it generated, which its client and dashboard URL carry; with
// --no-auth it has none, and still refuses what a page could send.
func TestDevModeGeneratesToken(t *testing.T) {
	ctx := context.Background()
	fl := startDev(t, dev.Config{Simulated: true})
	tok := fl.Token()
	if len(tok) < 40 {
		t.Fatalf("generated token %q is too short", tok)
	}
	if want := fl.URL() + "/#token="; !strings.HasPrefix(fl.DashboardURL(), want) || !strings.Contains(fl.DashboardURL(), tok) {
		t.Fatalf("DashboardURL %q does not carry the token after %s", fl.DashboardURL(), want)
	}
	if code := devPost(t, fl, "text/plain", "", ""); code != http.StatusUnauthorized {
		t.Fatalf("a text/plain POST without the token: %d, want 401", code)
	}
	if code := devPost(t, fl, "application/json", tok, ""); code != http.StatusCreated {
		t.Fatalf("a JSON POST with the token: %d, want 201", code)
	}
	c, err := fl.Client()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Counts(ctx); err != nil {
		t.Fatalf("dev mode's client: %v", err)
	}
	other := startDev(t, dev.Config{Simulated: true})
	if other.Token() == tok {
		t.Fatal("two dev modes generated the same token")
	}

	open := startDev(t, dev.Config{Simulated: true, NoAuth: true})
	if open.Token() != "" || open.DashboardURL() != open.URL()+"/" {
		t.Fatalf("--no-auth: token %q, dashboard %q", open.Token(), open.DashboardURL())
	}
	for _, c := range []struct {
		ct, host string
		want     int
	}{
		{"text/plain", "", http.StatusUnsupportedMediaType},
		{"application/json", "rebind.evil.example", http.StatusMisdirectedRequest},
		{"application/json", "", http.StatusCreated},
	} {
		if code := devPost(t, open, c.ct, "", c.host); code != c.want {
			t.Errorf("--no-auth, %s Host %q: %d, want %d", c.ct, c.host, code, c.want)
		}
	}
}
