package dispatcher

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
)

// guardCall sends one request to srv with the given headers ("Host" sets
// the Host header) and returns the status and error detail.
func guardCall(t *testing.T, srv *httptest.Server, method, path, body string, hdr map[string]string) (int, api.ErrorDetail) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var eb api.ErrorBody
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		_ = json.NewDecoder(resp.Body).Decode(&eb)
	}
	return resp.StatusCode, eb.Error
}

// TestTokenlessAPIRefusesAmbientRequests: without a token, what a web page
// could send (a text/plain or form POST, a cross-origin request, a
// rebound Host) is refused and stores nothing; a program's JSON request
// without Origin, and the API's own page, pass.
func TestTokenlessAPIRefusesAmbientRequests(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	srv := httptest.NewServer(b.d.Handler(APIOptions{ListenAddr: "127.0.0.1:0", AllowedHosts: []string{"fleet.internal", "*.dev.example"}}))
	t.Cleanup(srv.Close)
	own := strings.TrimPrefix(srv.URL, "http://")
	spec := `{"prompt":"ambient"}`
	for _, c := range []struct {
		name         string
		method, path string
		body         string
		hdr          map[string]string
		code         int
		field        string
	}{
		{"text/plain form", "POST", "/v1/tasks", spec, map[string]string{"Content-Type": "text/plain"}, 415, "Content-Type"},
		{"urlencoded form", "POST", "/v1/tasks", "prompt=x", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "Content-Type"},
		{"no content type", "POST", "/v1/tasks", spec, nil, 415, "Content-Type"},
		{"empty cancel", "POST", "/v1/tasks/00000000-0000-0000-0000-000000000001/cancel", "", nil, 415, "Content-Type"},
		{"budget as text", "PUT", "/v1/budgets/team=x", `{"limit_usd":1}`, map[string]string{"Content-Type": "text/plain"}, 415, "Content-Type"},
		{"foreign origin", "POST", "/v1/tasks", spec, map[string]string{"Content-Type": "application/json", "Origin": "http://evil.example"}, 403, "Origin"},
		{"null origin", "POST", "/v1/tasks", spec, map[string]string{"Content-Type": "application/json", "Origin": "null"}, 403, "Origin"},
		{"other localhost port", "POST", "/v1/tasks", spec, map[string]string{"Content-Type": "application/json", "Origin": "http://127.0.0.1:1"}, 403, "Origin"},
		{"cross-site fetch", "GET", "/v1/tasks", "", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "Origin"},
		{"same-site fetch", "POST", "/v1/tasks", spec, map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "same-site"}, 403, "Origin"},
		{"rebound host", "POST", "/v1/tasks", spec, map[string]string{"Content-Type": "application/json", "Host": "rebind.evil.example:8080"}, 421, "Host"},
		{"rebound host read", "GET", "/v1/tasks", "", map[string]string{"Host": "rebind.evil.example"}, 421, "Host"},
		{"rebound host metrics", "GET", "/metrics", "", map[string]string{"Host": "rebind.evil.example"}, 421, "Host"},
		{"rebinding page", "POST", "/v1/tasks", spec, map[string]string{"Content-Type": "application/json", "Host": "evil.example", "Origin": "http://evil.example", "Sec-Fetch-Site": "same-origin"}, 421, "Host"},
		{"suffix is not a subdomain", "GET", "/v1/tasks", "", map[string]string{"Host": "evildev.example"}, 421, "Host"},
	} {
		code, d := guardCall(t, srv, c.method, c.path, c.body, c.hdr)
		if code != c.code || d.Field != c.field || d.Message == "" {
			t.Errorf("%s: %d %+v, want %d naming %s", c.name, code, d, c.code, c.field)
		}
	}
	if n := b.storedTasks(t); n != 0 {
		t.Fatalf("refused requests stored %d tasks", n)
	}
	for _, c := range []struct {
		name string
		hdr  map[string]string
	}{
		{"program", map[string]string{"Content-Type": "application/json"}},
		{"charset", map[string]string{"Content-Type": "application/json; charset=utf-8"}},
		{"own page", map[string]string{"Content-Type": "application/json", "Origin": "http://" + own, "Sec-Fetch-Site": "same-origin"}},
		{"localhost", map[string]string{"Content-Type": "application/json", "Host": "localhost:8080"}},
		{"allowed host", map[string]string{"Content-Type": "application/json", "Host": "fleet.internal"}},
		{"allowed subdomain", map[string]string{"Content-Type": "application/json", "Host": "a.dev.example:443"}},
		{"proxied page", map[string]string{"Content-Type": "application/json", "Host": "fleet.internal", "Origin": "https://fleet.internal"}},
		{"ipv6 loopback", map[string]string{"Content-Type": "application/json", "Host": "[::1]:8080"}},
	} {
		if code, d := guardCall(t, srv, "POST", "/v1/tasks", spec, c.hdr); code != http.StatusCreated {
			t.Errorf("%s: %d %+v, want 201", c.name, code, d)
		}
	}
	// fleet/client sends JSON and no Origin: every call works.
	c, err := client.New(srv.URL, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := c.Submit(context.Background(), validSpec("from the client"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Cancel(context.Background(), sub.Task.ID, ""); err != nil {
		t.Fatalf("client cancel: %v", err)
	}
}

// TestHostCheckWithToken: with a token the Host check is off unless
// allowed_hosts is set (a proxy's name needs no configuration), and a
// wildcard listen address admits IP literals only.
func TestHostCheckWithToken(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	auth := map[string]string{"Authorization": "Bearer " + testToken, "Host": "fleet.example.com"}
	if code, d := guardCall(t, b.srv, "GET", "/v1/counts", "", auth); code != http.StatusOK {
		t.Fatalf("token, any Host: %d %+v", code, d)
	}
	named := httptest.NewServer(b.d.Handler(APIOptions{Token: testToken, ListenAddr: ":8080", AllowedHosts: []string{"fleet.example.com"}}))
	t.Cleanup(named.Close)
	for host, want := range map[string]int{"fleet.example.com": 200, "other.example.com": 421, "10.1.2.3:8080": 200, "[fd00::1]": 200} {
		auth["Host"] = host
		if code, d := guardCall(t, named, "GET", "/v1/counts", "", auth); code != want {
			t.Errorf("allowed_hosts set, Host %s: %d %+v, want %d", host, code, d, want)
		}
	}
	open := httptest.NewServer(b.d.Handler(APIOptions{ListenAddr: "127.0.0.1:8080"}))
	t.Cleanup(open.Close)
	if code, _ := guardCall(t, open, "GET", "/v1/counts", "", map[string]string{"Host": "10.1.2.3:8080"}); code != http.StatusMisdirectedRequest {
		t.Errorf("loopback listener, Host of another address: %d, want 421", code)
	}
}

// TestStreamTickets: an event stream opens with a ticket instead of the
// token, once; a ticket opens nothing else; another replica with the same
// token accepts it, one with another token does not.
func TestStreamTickets(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	ctx := context.Background()
	tk, err := b.client.StreamTicket(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if until := time.Until(tk.ExpiresAt); until <= 0 || until > DefaultTicketTTL {
		t.Fatalf("ticket expires in %s, want within %s", until, DefaultTicketTTL)
	}
	if strings.Contains(tk.Ticket, testToken) {
		t.Fatal("the ticket holds the token")
	}
	stream := func(srv *httptest.Server, path, ticket string) int {
		code, _ := guardCall(t, srv, "GET", path+"?from=new&ticket="+ticket, "", nil)
		return code
	}
	if code := stream(b.srv, "/v1/events", tk.Ticket); code != http.StatusOK {
		t.Fatalf("stream with a fresh ticket: %d", code)
	}
	if code := stream(b.srv, "/v1/events", tk.Ticket); code != http.StatusForbidden {
		t.Fatalf("stream with a used ticket: %d, want 403", code)
	}
	id := b.submit(t, "ticketed")
	tk2, _ := b.client.StreamTicket(ctx)
	if code, _ := guardCall(t, b.srv, "GET", "/v1/tasks/"+id.String()+"?ticket="+tk2.Ticket, "", nil); code != http.StatusUnauthorized {
		t.Fatalf("a ticket on a read that is not a stream: %d, want 401", code)
	}
	if code := stream(b.srv, "/v1/tasks/"+id.String()+"/events", tk2.Ticket); code != http.StatusOK {
		t.Fatalf("task stream with a ticket the read above did not spend: %d", code)
	}
	if code := stream(b.srv, "/v1/events", "forged"+tk2.Ticket[6:]); code != http.StatusForbidden {
		t.Fatalf("forged ticket: %d, want 403", code)
	}
	tk3, _ := b.client.StreamTicket(ctx)
	replica := httptest.NewServer(b.d.Handler(APIOptions{Token: testToken}))
	t.Cleanup(replica.Close)
	if code := stream(replica, "/v1/tasks/"+id.String()+"/tree/events", tk3.Ticket); code != http.StatusOK {
		t.Fatalf("a replica with the same token: %d, want 200", code)
	}
	other := httptest.NewServer(b.d.Handler(APIOptions{Token: "another-token"}))
	t.Cleanup(other.Close)
	tk4, _ := b.client.StreamTicket(ctx)
	if code := stream(other, "/v1/events", tk4.Ticket); code != http.StatusForbidden {
		t.Fatalf("a dispatcher with another token: %d, want 403", code)
	}
	if code, _ := guardCall(t, b.srv, "POST", "/v1/stream-tickets", "{}", map[string]string{"Content-Type": "application/json"}); code != http.StatusUnauthorized {
		t.Fatalf("a ticket without the token: %d, want 401", code)
	}
}

// TestTicketExpiry: a ticket is refused once its time is up.
func TestTicketExpiry(t *testing.T) {
	tk := newTickets("tok", time.Minute)
	now := time.Now()
	tk.now = func() time.Time { return now }
	who := BootstrapPrincipal()
	s, _ := tk.issue(who)
	now = now.Add(61 * time.Second)
	if _, ok := tk.redeem(s); ok {
		t.Fatal("an expired ticket was redeemed")
	}
	s, _ = tk.issue(who)
	p, ok := tk.redeem(s)
	if _, again := tk.redeem(s); !ok || again {
		t.Fatal("a fresh ticket must be redeemed exactly once")
	}
	if p.ID != who.ID || p.Grants["*"] != who.Grants["*"] {
		t.Fatalf("the ticket carried %+v, want %+v", p, who)
	}
	// A ticket whose principal was changed no longer verifies.
	s, _ = tk.issue(AnonymousPrincipal())
	raw, _ := base64.RawURLEncoding.DecodeString(s)
	forged := base64.RawURLEncoding.EncodeToString(bytes.Replace(raw, []byte("anonymous"), []byte("bootstrap"), 1))
	if _, ok := tk.redeem(forged); ok {
		t.Fatal("a ticket with a changed principal was redeemed")
	}
}
