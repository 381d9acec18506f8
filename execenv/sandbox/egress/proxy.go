package egress

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/execenv/sandbox/allowlist"
	"github.com/agentfleet/agentfleet/internal/outbound"
)

// dialTimeout bounds the connection to an admitted host.
const dialTimeout = 15 * time.Second

// Proxy is an HTTP proxy on a unix socket that admits only the hosts of
// its allowlist. Close stops it and ends the tunnels it opened.
type Proxy struct {
	allow  allowlist.List
	log    *slog.Logger
	ln     net.Listener
	srv    *http.Server
	dialer *outbound.Dialer
	fwd    *httputil.ReverseProxy

	mu      sync.Mutex
	tunnels map[net.Conn]struct{}
	closed  bool
	done    chan struct{} // closed when Serve has returned
}

// Listen serves a proxy for allow on a new unix socket at socketPath
// (mode 0600 in effect: only the worker's user, and the sandboxes it binds
// the socket into, can connect). log receives one line per refusal; nil
// discards. The proxy dials through the outbound guard
// (internal/outbound): an admitted name that resolves to a loopback,
// private, link-local, CGNAT or NAT64 address is refused unless
// allowPrivate (the operator's outbound_allow_private) contains it.
func Listen(socketPath string, allow allowlist.List, log *slog.Logger, allowPrivate ...netip.Prefix) (*Proxy, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("unix", socketPath)
	if err != nil {
		return nil, fmt.Errorf("egress: listen on %s: %w", socketPath, err)
	}
	if err := os.Chmod(socketPath, 0o600); err != nil {
		_ = ln.Close()
		return nil, fmt.Errorf("egress: %w", err)
	}
	p := &Proxy{allow: allow, log: log, ln: ln, tunnels: map[net.Conn]struct{}{}, done: make(chan struct{})}
	p.dialer = outbound.NewDialer(allowPrivate, dialTimeout)
	p.fwd = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL = r.In.URL
			r.Out.Host = r.In.URL.Host
		},
		Transport: &http.Transport{Proxy: nil, DialContext: p.dialer.DialContext, ResponseHeaderTimeout: time.Minute},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			p.log.Info("egress failed", "host", r.URL.Host, "err", err)
			http.Error(w, fmt.Sprintf("agentfleet egress proxy: %s: %v", r.URL.Host, err), http.StatusBadGateway)
		},
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go func() {
		defer close(p.done)
		_ = p.srv.Serve(ln)
	}()
	return p, nil
}

// Close stops the proxy and closes every open tunnel.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	p.mu.Lock()
	p.closed = true
	for c := range p.tunnels {
		_ = c.Close()
	}
	p.mu.Unlock()
	<-p.done
	return err
}

// ServeHTTP tunnels CONNECT requests and forwards absolute-URI requests
// to admitted hosts; everything else is refused with the reason.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hostport := r.Host
	if r.Method != http.MethodConnect {
		if !r.URL.IsAbs() || r.URL.Scheme != "http" {
			http.Error(w, "agentfleet egress proxy: only CONNECT and http:// requests with an absolute URI are proxied", http.StatusBadRequest)
			return
		}
		hostport = r.URL.Host
		if r.URL.Port() == "" {
			hostport = net.JoinHostPort(r.URL.Hostname(), "80")
		}
	}
	if !p.allow.Admits(hostport) {
		p.log.Info("egress refused", "host", hostport, "method", r.Method)
		http.Error(w, fmt.Sprintf("agentfleet egress proxy: %s is not in this task's allowlist (sandbox.allow_hosts)", hostport), http.StatusForbidden)
		return
	}
	if r.Method == http.MethodConnect {
		p.tunnel(w, r, hostport)
		return
	}
	p.fwd.ServeHTTP(w, r)
}

// tunnel connects to hostport and relays bytes both ways until either
// side closes.
func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request, hostport string) {
	up, err := p.dialer.DialContext(r.Context(), "tcp", hostport)
	if err != nil {
		http.Error(w, fmt.Sprintf("agentfleet egress proxy: connecting to %s: %v", hostport, err), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = up.Close()
		http.Error(w, "agentfleet egress proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		_ = up.Close()
		return
	}
	if !p.track(up, down) {
		return
	}
	defer p.untrack(up, down)
	if _, err := io.WriteString(down, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(up, buf) // what the client sent, buffered first
		closeWrite(up)
		close(done)
	}()
	_, _ = io.Copy(down, up)
	closeWrite(down)
	<-done
}

// track records a tunnel's connections so Close ends them; false (and
// both closed) when the proxy is already closed.
func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.tunnels[c] = struct{}{}
	}
	return true
}

func (p *Proxy) untrack(conns ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
		delete(p.tunnels, c)
	}
}

// closeWrite half-closes c when it can, so the other side sees the end
// of the stream while replies still flow.
func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// Addr is the socket's path.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }
