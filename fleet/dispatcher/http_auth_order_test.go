package dispatcher

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/internal/identity"
)

// headerAuth recognises "X-Test-User: <name>" and refuses "bad".
type headerAuth struct{}

func (headerAuth) Authenticate(r *http.Request) (identity.Principal, bool, error) {
	switch u := r.Header.Get("X-Test-User"); u {
	case "":
		return identity.Principal{}, false, nil
	case "bad":
		return identity.Principal{}, true, errors.New("the test credential is not valid")
	default:
		return identity.Principal{ID: "test:" + u, Name: u, DefaultTenant: "a",
			Grants: map[string]identity.Role{"a": identity.Approver, "b": identity.Viewer}}, true, nil
	}
}

// TestAuthenticatorsAfterToken: an authenticator that recognises the
// request decides it (its principal is who /v1/whoami names, a refusal
// is a 401); the bootstrap token, asked first, decides a request that
// carries it; a request no one recognises is a 401.
func TestAuthenticatorsAfterToken(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	srv := httptest.NewServer(b.d.Handler(APIOptions{Token: testToken, Authenticators: []identity.Authenticator{headerAuth{}}}))
	t.Cleanup(srv.Close)
	get := func(user, token string) (int, api.Whoami) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/whoami", nil)
		if user != "" {
			req.Header.Set("X-Test-User", user)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		var w api.Whoami
		_ = json.NewDecoder(resp.Body).Decode(&w)
		return resp.StatusCode, w
	}
	code, w := get("ada", "")
	if code != http.StatusOK || w.ID != "test:ada" || w.DefaultTenant != "a" || len(w.Grants) != 2 ||
		w.Grants["a"] != string(identity.Approver) || w.Grants["b"] != string(identity.Viewer) {
		t.Fatalf("whoami as ada: %d %+v", code, w)
	}
	if code, _ := get("bad", ""); code != http.StatusUnauthorized {
		t.Fatalf("a refused credential: %d, want 401", code)
	}
	if code, _ := get("", ""); code != http.StatusUnauthorized {
		t.Fatalf("no credential: %d, want 401", code)
	}
	code, w = get("", testToken)
	if code != http.StatusOK || w.ID != "bootstrap" || len(w.Grants) != 1 || !strings.EqualFold(w.Grants["*"], "admin") {
		t.Fatalf("whoami with the shared token: %d %+v", code, w)
	}
}
