package dispatcher

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestGitStoreRoute: the route is listed among the self-authenticated
// ones; a dispatcher without a store says so with a 404, and one with a
// store refuses a token request without the workers' credential.
func TestGitStoreRoute(t *testing.T) {
	if selfAuthenticated[gitStoreRoute] == "" {
		t.Fatalf("%s is not in selfAuthenticated", gitStoreRoute)
	}
	for name, cfg := range map[string]GitStoreConfig{
		"none":       {},
		"configured": {Dir: t.TempDir(), Key: "sixteen bytes or more", WorkerToken: "cred"},
	} {
		d := &Dispatcher{cfg: Config{GitStore: cfg}}
		rec := httptest.NewRecorder()
		d.gitStore().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/git/token", strings.NewReader("{}")))
		want := http.StatusUnauthorized
		if name == "none" {
			want = http.StatusNotFound
		}
		if rec.Code != want {
			t.Errorf("%s: %d %s, want %d", name, rec.Code, rec.Body, want)
		}
	}
}
