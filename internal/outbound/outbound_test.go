package outbound_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/internal/outbound"
)

func TestAllowlistMatchesParsedParts(t *testing.T) {
	a, err := outbound.ParseAllowlist("hooks_http_allowlist", []string{
		"https://hooks.example.com/", "https://*.svc.example.org", "http://plain.example:8080/hook",
		"api.example.net", "https://bücher.example", "[::1]:9000",
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url  string
		want bool
	}{
		{"https://hooks.example.com/anything", true},
		{"https://hooks.example.com:443/x", true},
		{"https://HOOKS.Example.COM/x", true},
		{"https://hooks.example.com./x", true},
		{"https://hooks.example.com@169.254.169.254/", false},
		{"https://user:pw@hooks.example.com/", false},
		{"https://hooks.example.com.evil.net/", false},
		{"https://evilhooks.example.com/", false},
		{"https://hooks.example.com:8443/", false},
		{"http://hooks.example.com/", false},
		{"ftp://hooks.example.com/", false},
		{"https://a.svc.example.org/", true},
		{"https://a.b.svc.example.org/", true},
		{"https://svc.example.org/", false},
		{"https://a.svc.example.org.evil/", false},
		{"http://plain.example:8080/hook", true},
		{"http://plain.example:8080/hook/sub", true},
		{"http://plain.example:8080/hooks", false},
		{"http://plain.example:8080/hook/../admin", false},
		{"http://plain.example:8080/hook/%2e%2e/admin", false},
		{"http://plain.example:8080/hook%2f..%2fadmin", false},
		{"http://plain.example/hook", false},
		{"http://api.example.net/", true},
		{"https://api.example.net/", true},
		{"https://api.example.net:8443/", false},
		{"https://xn--bcher-kva.example/", true},
		{"https://BÜCHER.example/", true},
		{"http://[::1]:9000/", true},
		{"http://[0:0:0:0:0:0:0:1]:9000/", true},
		{"http://[::1]:9001/", false},
	} {
		if got := a.Admits(c.url); got != c.want {
			t.Errorf("Admits(%q) = %v, want %v", c.url, got, c.want)
		}
	}
}

func TestAllowlistRefusesBadEntries(t *testing.T) {
	for _, bad := range []string{
		"", "ftp://x.example", "https://user@x.example", "https://x.example:0", "https://x.example:99999",
		"https://x.example:http", ".example.com", "https://*.10.0.0.1", "https://x.example/a/../b",
		"https://x.example/?q=1", "https://*", "https://exa mple.com",
	} {
		_, err := outbound.ParseAllowlist("mcp_http_allowlist", []string{"https://ok.example", bad})
		if err == nil {
			t.Errorf("entry %q was accepted", bad)
			continue
		}
		if !strings.Contains(err.Error(), "mcp_http_allowlist[1]") {
			t.Errorf("entry %q: error %q does not name the field", bad, err)
		}
	}
}

func TestZeroAllowlistAdmitsNothingAndAnyURLEverything(t *testing.T) {
	if (outbound.Allowlist{}).Admits("https://example.com/") {
		t.Error("the zero Allowlist admitted a URL")
	}
	any := outbound.AnyURL()
	if !any.Admits("https://example.com/") || any.Admits("https://u@example.com/") || any.Admits("file:///etc/passwd") {
		t.Error("AnyURL must admit http(s) URLs without user info, and only those")
	}
}

func TestSpecialAddresses(t *testing.T) {
	for _, c := range []struct {
		addr    string
		special bool
	}{
		{"127.0.0.1", true}, {"127.8.9.10", true}, {"::1", true}, {"::ffff:127.0.0.1", true},
		{"10.1.2.3", true}, {"172.16.0.1", true}, {"172.31.255.255", true}, {"192.168.1.1", true},
		{"169.254.169.254", true}, {"::ffff:169.254.169.254", true}, {"fe80::1", true}, {"fe80::1%eth0", true},
		{"100.64.0.1", true}, {"100.127.255.254", true}, {"64:ff9b::7f00:1", true}, {"64:ff9b:1::a00:1", true},
		{"0.0.0.0", true}, {"0.1.2.3", true}, {"::", true}, {"224.0.0.1", true}, {"ff02::1", true},
		{"255.255.255.255", true}, {"fc00::1", true}, {"fd12:3456::1", true}, {"::127.0.0.1", true},
		{"2002:7f00:1::", true}, {"198.18.0.1", true},
		{"8.8.8.8", false}, {"1.1.1.1", false}, {"100.128.0.1", false}, {"172.32.0.1", false},
		{"2606:4700:4700::1111", false}, {"::ffff:8.8.8.8", false},
	} {
		ip := netip.MustParseAddr(c.addr)
		if got := outbound.Special(ip) != ""; got != c.special {
			t.Errorf("Special(%s) = %q, want special=%v", c.addr, outbound.Special(ip), c.special)
		}
	}
}

func TestParsePrefixes(t *testing.T) {
	got, err := outbound.ParsePrefixes("outbound_allow_private", []string{"10.0.0.5", "10.20.3.4/16", "::ffff:192.168.1.1", "fd00::/8"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.5/32", "10.20.0.0/16", "192.168.1.1/32", "fd00::/8"}
	for i, p := range got {
		if p.String() != want[i] {
			t.Errorf("entry %d = %s, want %s", i, p, want[i])
		}
	}
	for _, bad := range []string{"git.internal", "10.0.0.0/33", "fe80::1%eth0", ""} {
		if _, err := outbound.ParsePrefixes("outbound_allow_private", []string{bad}); err == nil || !strings.Contains(err.Error(), "outbound_allow_private[0]") {
			t.Errorf("ParsePrefixes(%q) = %v, want an error naming the entry", bad, err)
		}
	}
}

// loopback allows the loopback addresses tests serve on.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

func TestDialerRefusesAfterResolution(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	ctx := context.Background()
	strict := outbound.NewDialer(nil, 0)
	for _, host := range []string{"127.0.0.1", "localhost", "127.1.2.3", "[::ffff:127.0.0.1]", "0.0.0.0",
		"169.254.169.254", "100.64.0.1", "[64:ff9b::7f00:1]", "[::1]", "10.0.0.1", "[fe80::1]"} {
		addr := net.JoinHostPort(strings.Trim(host, "[]"), itoa(port))
		_, err := strict.DialContext(ctx, "tcp", addr)
		if _, ok := errors.AsType[*outbound.RefusedError](err); !ok {
			t.Errorf("dial %s: %v, want a RefusedError", addr, err)
		}
	}
	if _, err := strict.DialContext(ctx, "udp", "8.8.8.8:53"); err == nil {
		t.Error("a udp dial was allowed")
	}
	allowed := outbound.NewDialer(loopback, 0)
	for _, host := range []string{"127.0.0.1", "localhost"} {
		c, err := allowed.DialContext(ctx, "tcp4", net.JoinHostPort(host, itoa(port)))
		if err != nil {
			t.Errorf("dial %s with loopback allowed: %v", host, err)
			continue
		}
		_ = c.Close()
	}
	// Allowing one address does not allow its neighbours.
	one := outbound.NewDialer([]netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}, 0)
	if _, err := one.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", itoa(port))); err == nil {
		t.Error("127.0.0.1 was dialled with only 127.0.0.2 allowed")
	}
}

func itoa(n int) string {
	return netip.AddrPortFrom(netip.IPv4Unspecified(), uint16(n)).String()[len("0.0.0.0:"):]
}

// recorder is a loopback server recording the headers it receives.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	seen []http.Header
}

func newRecorder(t *testing.T, h http.HandlerFunc) *recorder {
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.seen = append(r.seen, req.Header.Clone())
		r.mu.Unlock()
		if h != nil {
			h(w, req)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.seen...)
}

func redirectTo(target string) http.HandlerFunc {
	return func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, target, http.StatusTemporaryRedirect)
	}
}

func TestClientRefusesPrivateByDefault(t *testing.T) {
	srv := newRecorder(t, nil)
	resp, err := outbound.Client(outbound.Policy{Allow: outbound.AnyURL()}).Get(srv.URL)
	if err == nil {
		_ = resp.Body.Close()
		t.Fatal("a loopback server was reached without allow-private")
	}
	var re *outbound.RefusedError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "outbound_allow_private") {
		t.Fatalf("err = %v, want a RefusedError naming outbound_allow_private", err)
	}
	if n := len(srv.headers()); n != 0 {
		t.Fatalf("the server saw %d requests", n)
	}
}

func TestCrossOriginRedirectDropsSecrets(t *testing.T) {
	other := newRecorder(t, nil)
	first := newRecorder(t, redirectTo(other.URL+"/landing"))
	p := outbound.Policy{Allow: outbound.AnyURL(), AllowPrivate: loopback,
		Headers: http.Header{"X-Api-Key": {"k1"}}, SecretHeaders: []string{"X-Extra"}}
	req, _ := http.NewRequest(http.MethodGet, first.URL+"/start", nil)
	req.Header.Set("Authorization", "Bearer t0k3n")
	req.Header.Set("Private-Token", "gl")
	req.Header.Set("X-Extra", "e")
	req.Header.Set("X-Plain", "p")
	resp, err := outbound.Client(p).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	got := first.headers()
	if len(got) != 1 || got[0].Get("Authorization") != "Bearer t0k3n" || got[0].Get("X-Api-Key") != "k1" {
		t.Fatalf("the first origin saw %v, want its secrets", got)
	}
	got = other.headers()
	if len(got) != 1 {
		t.Fatalf("the second origin saw %d requests, want 1", len(got))
	}
	for _, k := range []string{"Authorization", "Private-Token", "X-Extra", "X-Api-Key"} {
		if v := got[0].Get(k); v != "" {
			t.Errorf("the second origin received %s: %q", k, v)
		}
	}
	if got[0].Get("X-Plain") != "p" {
		t.Error("a header that is not secret was dropped")
	}
}

func TestSameOriginRedirectKeepsSecrets(t *testing.T) {
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	p := outbound.Policy{Allow: outbound.AnyURL(), AllowPrivate: loopback, Headers: http.Header{"Authorization": {"Bearer a"}}}
	resp, err := outbound.Client(p).Get(srv.URL + "/old")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	got := srv.headers()
	if len(got) != 2 || got[1].Get("Authorization") != "Bearer a" {
		t.Fatalf("headers = %v, want the secret on the same-origin hop", got)
	}
}

func TestSecretsStayDroppedAfterLeavingTheOrigin(t *testing.T) {
	p := outbound.Policy{Allow: outbound.AnyURL(), AllowPrivate: loopback, Headers: http.Header{"Authorization": {"Bearer a"}}}
	// Origin A redirects to B, which redirects back to A.
	var a *recorder
	b := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, a.URL+"/back", http.StatusFound)
	})
	a = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/start" {
			http.Redirect(w, r, b.URL, http.StatusFound)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	resp, err := outbound.Client(p).Get(a.URL + "/start")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	got := a.headers()
	if len(got) != 2 || got[0].Get("Authorization") == "" || got[1].Get("Authorization") != "" {
		t.Fatalf("origin A saw %v: want the secret on the first request only", got)
	}
	if h := b.headers(); len(h) != 1 || h[0].Get("Authorization") != "" {
		t.Fatalf("origin B saw %v", h)
	}
}

func TestRedirectsAreCheckedAgainstTheAllowlistAndCapped(t *testing.T) {
	off := newRecorder(t, nil)
	on := newRecorder(t, redirectTo(off.URL))
	onURL, _ := url.Parse(on.URL)
	allow, err := outbound.ParseAllowlist("test", []string{"http://" + onURL.Host})
	if err != nil {
		t.Fatal(err)
	}
	c := outbound.Client(outbound.Policy{Allow: allow, AllowPrivate: loopback})
	if resp, err := c.Get(on.URL); err == nil || !strings.Contains(err.Error(), "not on the allowlist") {
		if resp != nil {
			_ = resp.Body.Close()
		}
		t.Fatalf("redirect off the allowlist: err = %v", err)
	}
	if n := len(off.headers()); n != 0 {
		t.Fatalf("the host off the allowlist was reached %d times", n)
	}
	// The first request is checked too, by the transport.
	if resp, err := c.Get(off.URL); err == nil {
		_ = resp.Body.Close()
		t.Fatal("a URL off the allowlist was fetched")
	}
	// A redirect loop stops at the cap.
	var loop *recorder
	loop = newRecorder(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, loop.URL, http.StatusFound) })
	if resp, err := outbound.Client(outbound.Policy{Allow: outbound.AnyURL(), AllowPrivate: loopback, MaxRedirects: 3}).Get(loop.URL); err == nil || !strings.Contains(err.Error(), "after 3 redirects") {
		if resp != nil {
			_ = resp.Body.Close()
		}
		t.Fatalf("loop: err = %v", err)
	}
	if n := len(loop.headers()); n != 4 {
		t.Fatalf("the loop was requested %d times, want 4 (the first and 3 hops)", n)
	}
	// A redirect to a private address is refused after resolution even
	// when the allowlist admits any URL.
	toMeta := newRecorder(t, redirectTo("http://169.254.169.254/latest/meta-data/"))
	resp, err := outbound.Client(outbound.Policy{Allow: outbound.AnyURL(), AllowPrivate: loopback}).Get(toMeta.URL)
	if _, ok := errors.AsType[*outbound.RefusedError](err); !ok {
		if resp != nil {
			_ = resp.Body.Close()
		}
		t.Fatalf("redirect to the metadata address: err = %v, want a RefusedError", err)
	}
}

func TestSameOrigin(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"http://h/sse", "http://H:80/message?s=1", true},
		{"https://bücher.example/a", "https://xn--bcher-kva.example:443/b", true},
		{"http://[::ffff:127.0.0.1]:8080/", "http://127.0.0.1:8080/x", true},
		{"http://h/sse", "https://h/sse", false},
		{"http://h/sse", "http://h:8080/sse", false},
		{"http://h/sse", "http://h.evil.net/sse", false},
	} {
		a, _ := url.Parse(tc.a)
		b, _ := url.Parse(tc.b)
		if got := outbound.SameOrigin(a, b); got != tc.same {
			t.Errorf("SameOrigin(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}
