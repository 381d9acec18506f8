package ratelimit

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/llm"
)

type ctxKey struct{}

// scope is what a request's context tells the transport.
type scope struct {
	key    Key
	notify func(waited time.Duration, reason string)
}

// WithKey marks the requests made under ctx as k's; notify, when not nil,
// is told when one waited for the limit.
func WithKey(ctx context.Context, k Key, notify func(waited time.Duration, reason string)) context.Context {
	return context.WithValue(ctx, ctxKey{}, scope{key: k, notify: notify})
}

// KeyFrom returns the key WithKey put in ctx.
func KeyFrom(ctx context.Context) (Key, bool) {
	s, ok := ctx.Value(ctxKey{}).(scope)
	return s.key, ok
}

// Transport wraps base (nil: llm.DefaultTransport()): every request whose
// context carries a covered key waits for the limiter and holds its
// concurrency lease until its body is closed, and every response's
// headers adjust the shared state.
func (l *Limiter) Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = llm.DefaultTransport()
	}
	return &transport{l: l, base: base}
}

type transport struct {
	l    *Limiter
	base http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	sc, ok := req.Context().Value(ctxKey{}).(scope)
	if !ok || !t.l.Limited(sc.key) {
		return t.base.RoundTrip(req)
	}
	p, err := t.l.Acquire(req.Context(), sc.key)
	if err != nil && req.Context().Err() != nil {
		return nil, err
	}
	// A limiter that cannot reach its bucket (NATS away) lets the request
	// through: the provider's own limit still holds, and a fleet that
	// lost NATS should not also lose its running sessions.
	if p != nil && p.Waited > 0 && sc.notify != nil {
		sc.notify(p.Waited, p.Reason)
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		p.Release(context.WithoutCancel(req.Context()))
		return nil, err
	}
	if err := t.l.Observe(context.WithoutCancel(req.Context()), sc.key, resp.StatusCode, resp.Header); err != nil {
		_ = err // the limiter is advisory: a failed write never fails the call
	}
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: func() { p.Release(context.Background()) }}
	return resp, nil
}

// releasingBody releases a permit once, when the body is closed.
type releasingBody struct {
	io.ReadCloser
	once    sync.Once
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.release)
	return err
}
