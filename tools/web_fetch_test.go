package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/llm"
)

func fetchWith(t *testing.T, cfg WebFetchConfig, url string) Result {
	t.Helper()
	tool, err := WebFetch(cfg)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(WebFetchParams{URL: url})
	return NewRegistry(tool).Execute(context.Background(), llm.ToolCall{Name: "web_fetch", Arguments: raw}, nil, ExecOptions{})
}

func TestWebFetch(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<html><body><script>x()</script><h1>Docs</h1><p>Use &lt;b&gt; wisely.</p></body></html>")
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, strings.Repeat("z", 5000))
		case "/bin":
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write([]byte{0, 1, 2})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	open := WebFetchConfig{Enabled: true, AllowPrivate: loopback, MaxBytes: 1000}
	tests := []struct {
		name    string
		cfg     WebFetchConfig
		path    string
		isError bool
		want    []string
	}{
		{"html to text", open, "/page", false, []string{"Status: 200 OK", "Docs\n\nUse <b> wisely."}},
		{"size limit", open, "/big", false, []string{"cut at 1000 bytes"}},
		{"not text", open, "/bin", true, []string{"not text"}},
		{"http error", open, "/missing", true, []string{"404"}},
		{"disabled by default", WebFetchConfig{}, "/page", true, []string{"web_fetch is disabled"}},
		{"private addresses refused by default", WebFetchConfig{Enabled: true}, "/page", true, []string{"a loopback address"}},
		{"host not allowed", WebFetchConfig{Enabled: true, AllowPrivate: loopback, AllowedHosts: []string{".example.com"}}, "/page", true, []string{"not allowed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := fetchWith(t, tt.cfg, srv.URL+tt.path)
			if res.IsError != tt.isError {
				t.Fatalf("IsError = %v: %s", res.IsError, res.Content)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("content %q lacks %q", res.Content, w)
				}
			}
		})
	}
	if res := fetchWith(t, open, "file:///etc/passwd"); !res.IsError || !strings.Contains(res.Content, "not an http or https URL") {
		t.Fatalf("file URL: %+v", res)
	}
	if _, err := WebFetch(WebFetchConfig{MaxBytes: -1}); err == nil || !strings.Contains(err.Error(), "WebFetchConfig.MaxBytes") {
		t.Fatalf("Validate: %v", err)
	}
}

// loopback lets the tests' servers on 127.0.0.1 be fetched.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// TestWebFetchRefusesInternalAddresses: every internal range is refused
// after resolution, a name resolving to loopback included, even with no
// host allowlist.
func TestWebFetchRefusesInternalAddresses(t *testing.T) {
	cfg := WebFetchConfig{Enabled: true, Timeout: 5 * time.Second}
	for _, u := range []string{
		"http://localhost:9/", "http://127.0.0.1:9/", "http://[::1]:9/", "http://[::ffff:127.0.0.1]:9/",
		"http://100.64.0.1:9/", "http://[64:ff9b::a9fe:a9fe]:9/", "http://169.254.169.254/latest/meta-data/",
		"http://10.0.0.1:9/", "http://0.0.0.0:9/", "http://[fd00::1]:9/",
	} {
		res := fetchWith(t, cfg, u)
		if !res.IsError || !strings.Contains(res.Content, "outbound: refusing to connect") {
			t.Errorf("%s: %s, want refused", u, res.Content)
		}
	}
}

// TestWebFetchChecksRedirects: a redirect to a host off the allowlist is
// not followed; one to an allowed host is.
func TestWebFetchChecksRedirects(t *testing.T) {
	var offHits atomic.Int32
	off := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		offHits.Add(1)
		fmt.Fprint(w, "secret internal page")
	}))
	defer off.Close()
	on := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, off.URL+"/", http.StatusFound)
		case "/moved":
			http.Redirect(w, r, "/here", http.StatusMovedPermanently)
		default:
			fmt.Fprint(w, "public page")
		}
	}))
	defer on.Close()
	onHost := strings.TrimPrefix(on.URL, "http://")
	cfg := WebFetchConfig{Enabled: true, AllowPrivate: loopback, AllowedHosts: []string{onHost}}
	if res := fetchWith(t, cfg, on.URL+"/away"); !res.IsError || !strings.Contains(res.Content, "not on the allowlist") || offHits.Load() != 0 {
		t.Fatalf("redirect off the allowlist: %s (hits %d)", res.Content, offHits.Load())
	}
	if res := fetchWith(t, cfg, on.URL+"/moved"); res.IsError || !strings.Contains(res.Content, "public page") {
		t.Fatalf("redirect on the allowlist: %s", res.Content)
	}
	if _, err := WebFetch(WebFetchConfig{AllowedHosts: []string{"https://u@x.example"}}); err == nil {
		t.Fatal("an allowlist entry with user info was accepted")
	}
}
