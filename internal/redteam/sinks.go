package redteam

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// httpSink is a loopback HTTP server that records every request it gets
// and answers with handler (404 when nil).
type httpSink struct {
	URL     string // http://host:port
	mu      sync.Mutex
	reqs    []string // "METHOD path" and the headers, one line
	headers []http.Header
	srv     *http.Server
	first   chan struct{} // closed at the first request
	once    sync.Once
}

// newHTTPSink listens on host (127.0.0.1 or another loopback address).
func newHTTPSink(host string, handler http.HandlerFunc) (*httpSink, error) {
	ln, err := net.Listen("tcp", host+":0")
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", host, err)
	}
	s := &httpSink{URL: "http://" + ln.Addr().String(), first: make(chan struct{})}
	s.srv = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.reqs = append(s.reqs, r.Method+" "+r.URL.RequestURI())
		s.headers = append(s.headers, r.Header.Clone())
		s.mu.Unlock()
		s.once.Do(func() { close(s.first) })
		if handler != nil {
			handler(w, r)
			return
		}
		http.NotFound(w, r)
	})}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Hits returns the requests received so far.
func (s *httpSink) Hits() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.reqs...)
}

// HeaderWith returns the first request header whose value contains v.
func (s *httpSink) HeaderWith(v string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, h := range s.headers {
		for k, vs := range h {
			for _, x := range vs {
				if strings.Contains(x, v) {
					return k, true
				}
			}
		}
	}
	return "", false
}

func (s *httpSink) Close() { _ = s.srv.Close() }

// connSink counts the connections (TCP or unix) or datagrams (UDP) a
// listener receives, with the first bytes of each.
type connSink struct {
	Addr string
	mu   sync.Mutex
	got  []string
	stop func()
}

func (s *connSink) add(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, strings.TrimSpace(string(b)))
}

// Hits returns what arrived so far.
func (s *connSink) Hits() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

func (s *connSink) Close() { s.stop() }

// newStreamSink listens on network ("tcp" or "unix") at addr.
func newStreamSink(network, addr string) (*connSink, error) {
	ln, err := net.Listen(network, addr)
	if err != nil {
		return nil, err
	}
	s := &connSink{Addr: ln.Addr().String(), stop: func() { _ = ln.Close() }}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
				b := make([]byte, 256)
				n, _ := c.Read(b)
				s.add(b[:n])
			}()
		}
	}()
	return s, nil
}

// newUDPSink listens for datagrams on 127.0.0.1.
func newUDPSink() (*connSink, error) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &connSink{Addr: pc.LocalAddr().String(), stop: func() { _ = pc.Close() }}
	go func() {
		b := make([]byte, 512)
		for {
			n, _, err := pc.ReadFrom(b)
			if err != nil {
				return
			}
			s.add(b[:n])
		}
	}()
	return s, nil
}

// redirectTo answers every request with a 307 to the same path on base.
func redirectTo(base string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, base+r.URL.RequestURI(), http.StatusTemporaryRedirect) //nolint:gosec // G710: the redirecting sink is the probe
	}
}
