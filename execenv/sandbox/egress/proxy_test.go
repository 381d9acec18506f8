package egress_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/execenv/sandbox/allowlist"
	"github.com/agentfleet/agentfleet/execenv/sandbox/egress"
)

// loopback lets the proxy reach the tests' servers.
var loopback = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// proxy serves a proxy admitting hosts, and loopback addresses, and
// returns it.
func proxy(t *testing.T, hosts ...string) *egress.Proxy {
	t.Helper()
	return proxyAllowing(t, loopback, hosts...)
}

// proxyAllowing serves a proxy admitting hosts at the internal addresses
// of allowPrivate.
func proxyAllowing(t *testing.T, allowPrivate []netip.Prefix, hosts ...string) *egress.Proxy {
	t.Helper()
	allow, err := allowlist.Parse(hosts)
	if err != nil {
		t.Fatal(err)
	}
	p, err := egress.Listen(filepath.Join(t.TempDir(), "egress.sock"), allow, nil, allowPrivate...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// server answers "hello" and returns its host:port.
func server(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") }))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return u.Host
}

// send writes raw to the proxy's socket and returns the connection and a
// reader of what comes back.
func send(t *testing.T, p *egress.Proxy, raw string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("unix", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	return c, bufio.NewReader(c)
}

// An admitted host is reached with an absolute URI and through CONNECT;
// another is refused with 403 naming it; a request that is not a proxy
// request is a 400.
func TestProxyAdmitsOnlyTheAllowlist(t *testing.T) {
	addr := server(t)
	_, port, _ := net.SplitHostPort(addr)
	p := proxy(t, "localhost:"+port)
	_, r := send(t, p, fmt.Sprintf("GET http://localhost:%s/ HTTP/1.1\r\nHost: localhost:%s\r\nConnection: close\r\n\r\n", port, port))
	if body, _ := io.ReadAll(r); !strings.HasPrefix(string(body), "HTTP/1.1 200") || !strings.HasSuffix(string(body), "hello") {
		t.Fatalf("an absolute URI to an admitted host: %q", body)
	}
	c, r := send(t, p, fmt.Sprintf("CONNECT localhost:%s HTTP/1.1\r\nHost: localhost:%s\r\n\r\n", port, port))
	if line, _ := r.ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("CONNECT to an admitted host: %q", line)
	}
	_, _ = r.ReadString('\n') // the blank line ending the proxy's answer
	_, _ = io.WriteString(c, "GET / HTTP/1.0\r\n\r\n")
	if body, _ := io.ReadAll(r); !strings.HasSuffix(string(body), "hello") {
		t.Fatalf("through the tunnel: %q", body)
	}
	for _, raw := range []string{
		"GET http://" + addr + "/ HTTP/1.1\r\nHost: " + addr + "\r\nConnection: close\r\n\r\n", // the same server by its IP
		"CONNECT localhost:1 HTTP/1.1\r\nHost: localhost:1\r\n\r\n",                            // another port
	} {
		_, r := send(t, p, raw)
		if line, _ := r.ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 403") {
			t.Errorf("%q: %q, want 403", strings.SplitN(raw, "\r\n", 2)[0], line)
		}
	}
	_, r = send(t, p, "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
	if line, _ := r.ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 400") {
		t.Errorf("a request that is not a proxy request: %q, want 400", line)
	}
}

// An admitted name that resolves to an internal address is refused after
// resolution unless the operator allows the address: a task cannot reach
// the worker's loopback (or the cloud metadata endpoint) by naming it.
func TestProxyRefusesInternalAddressesAfterResolution(t *testing.T) {
	addr := server(t)
	_, port, _ := net.SplitHostPort(addr)
	p := proxyAllowing(t, nil, "localhost:"+port, "127.0.0.1", "169.254.169.254")
	for _, raw := range []string{
		fmt.Sprintf("GET http://localhost:%s/ HTTP/1.1\r\nHost: localhost:%s\r\nConnection: close\r\n\r\n", port, port),
		fmt.Sprintf("CONNECT localhost:%s HTTP/1.1\r\nHost: localhost:%s\r\n\r\n", port, port),
		"CONNECT " + addr + " HTTP/1.1\r\nHost: " + addr + "\r\n\r\n",
		"CONNECT 169.254.169.254:80 HTTP/1.1\r\nHost: 169.254.169.254:80\r\n\r\n",
	} {
		_, r := send(t, p, raw)
		if line, _ := r.ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 502") {
			t.Errorf("%q: %q, want 502", strings.SplitN(raw, "\r\n", 2)[0], line)
		}
	}
}

// Close ends the tunnels the proxy holds open.
func TestCloseEndsTunnels(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			defer func() { _ = c.Close() }()
			_, _ = io.Copy(io.Discard, c) // holds the tunnel open
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	p := proxy(t, "127.0.0.1")
	_, r := send(t, p, "CONNECT 127.0.0.1:"+port+" HTTP/1.1\r\nHost: 127.0.0.1:"+port+"\r\n\r\n")
	if line, _ := r.ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("CONNECT: %q", line)
	}
	_, _ = r.ReadString('\n')
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadByte(); err == nil {
		t.Fatal("the tunnel is still open after Close")
	}
}
