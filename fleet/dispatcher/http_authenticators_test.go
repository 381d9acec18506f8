package dispatcher

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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

// TestAuthenticatorsBeforeToken: an authenticator that recognises the
// request decides it (its principal is who /v1/whoami names, a refusal
// is a 401 even with the right token beside it); a request it does not
// recognise still needs the token.
func TestAuthenticatorsBeforeToken(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	srv := httptest.NewServer(b.d.Handler(APIOptions{Token: testToken, Authenticators: []identity.Authenticator{headerAuth{}}}))
	t.Cleanup(srv.Close)
	get := func(user, token string) (int, whoamiResponse) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/v1/whoami", nil)
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
		var w whoamiResponse
		_ = json.NewDecoder(resp.Body).Decode(&w)
		return resp.StatusCode, w
	}
	code, w := get("ada", "")
	if code != http.StatusOK || w.ID != "test:ada" || w.DefaultTenant != "a" || len(w.Grants) != 2 ||
		w.Grants[0] != (whoamiGrant{"a", identity.Approver}) || w.Grants[1] != (whoamiGrant{"b", identity.Viewer}) {
		t.Fatalf("whoami as ada: %d %+v", code, w)
	}
	if code, _ := get("bad", testToken); code != http.StatusUnauthorized {
		t.Fatalf("a refused credential beside the token: %d, want 401", code)
	}
	if code, _ := get("", ""); code != http.StatusUnauthorized {
		t.Fatalf("no credential: %d, want 401", code)
	}
	code, w = get("", testToken)
	if code != http.StatusOK || w.ID != "token" || len(w.Grants) != 1 || w.Grants[0].Tenant != "*" || !strings.EqualFold(string(w.Grants[0].Role), "admin") {
		t.Fatalf("whoami with the shared token: %d %+v", code, w)
	}
}
