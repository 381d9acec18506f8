package dashboard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet/dashboard"
)

func TestHandlerServesAssets(t *testing.T) {
	srv := httptest.NewServer(dashboard.Handler())
	defer srv.Close()
	for _, tc := range []struct{ path, contentType, contains string }{
		{"/", "text/html", `<script src="app.js"`},
		{"/index.html", "text/html", "agentfleet"},
		{"/app.js", "javascript", "EventSource"},
		{"/style.css", "text/css", ".ev"},
		{"/favicon.svg", "image/svg+xml", "<svg"},
	} {
		resp, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: status %d", tc.path, resp.StatusCode)
			continue
		}
		if ct := resp.Header.Get("Content-Type"); !strings.Contains(ct, tc.contentType) {
			t.Errorf("GET %s: Content-Type %q, want %q", tc.path, ct, tc.contentType)
		}
		if !strings.Contains(string(body), tc.contains) {
			t.Errorf("GET %s: body lacks %q", tc.path, tc.contains)
		}
		if resp.Header.Get("Content-Security-Policy") == "" || resp.Header.Get("ETag") == "" {
			t.Errorf("GET %s: missing CSP or ETag headers: %v", tc.path, resp.Header)
		}
	}
}

func TestHandlerNotModifiedAndNotFound(t *testing.T) {
	srv := httptest.NewServer(dashboard.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/app.js")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/app.js", nil)
	req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
	again, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = again.Body.Close()
	if again.StatusCode != http.StatusNotModified {
		t.Errorf("conditional GET: status %d, want 304", again.StatusCode)
	}
	for _, p := range []string{"/v1/tasks", "/static/app.js", "/nope.js"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", p, resp.StatusCode)
		}
	}
}

func TestWithRoutesToAPI(t *testing.T) {
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-API", "yes")
		w.WriteHeader(http.StatusTeapot)
	})
	srv := httptest.NewServer(dashboard.With(api))
	defer srv.Close()
	for path, fromAPI := range map[string]bool{"/": false, "/app.js": false, "/v1/tasks": true, "/healthz": true, "/metrics": true} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if got := resp.Header.Get("X-API") == "yes"; got != fromAPI {
			t.Errorf("GET %s: served by the API = %v, want %v", path, got, fromAPI)
		}
	}
	// A POST to / is not the dashboard's.
	resp, err := http.Post(srv.URL+"/", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusTeapot {
		t.Errorf("POST /: status %d, want the API's", resp.StatusCode)
	}
}
