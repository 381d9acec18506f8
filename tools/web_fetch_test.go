package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
			w.Write([]byte{0, 1, 2})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	open := WebFetchConfig{Enabled: true, AllowPrivate: true, MaxBytes: 1000}
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
		{"private addresses refused by default", WebFetchConfig{Enabled: true}, "/page", true, []string{"is internal and may not be fetched"}},
		{"host not allowed", WebFetchConfig{Enabled: true, AllowPrivate: true, AllowedHosts: []string{".example.com"}}, "/page", true, []string{"not allowed"}},
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
