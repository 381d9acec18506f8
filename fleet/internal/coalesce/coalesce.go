package coalesce

import (
	"context"
	"iter"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/agent"
)

// Defaults of Config.
const (
	DefaultWindow   = 50 * time.Millisecond
	DefaultMaxBytes = 1024
)

// Config sets how deltas are merged. The zero value means the defaults.
type Config struct {
	// Window is the longest a delta waits for more (default 50 ms; negative:
	// no merging, every delta is passed on as it comes).
	Window time.Duration
	// MaxBytes flushes the merged text once it holds this many bytes
	// (default 1024).
	MaxBytes int
}

// WithDefaults fills the zero fields.
func (c Config) WithDefaults() Config {
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	return c
}

// Source is a session's event subscription (*agent.Subscription): Next
// waits for the next event and reports false once the source has ended or
// ctx has.
type Source interface {
	Next(ctx context.Context) (agent.Event, bool)
}

// Events yields src's events, with runs of text deltas merged as the
// package doc says, until src ends or ctx does; the merged text still held
// then is yielded first.
func Events(ctx context.Context, src Source, cfg Config) iter.Seq[agent.Event] {
	cfg = cfg.WithDefaults()
	return func(yield func(agent.Event) bool) {
		if cfg.Window < 0 {
			for ev, ok := src.Next(ctx); ok; ev, ok = src.Next(ctx) {
				if !yield(ev) {
					return
				}
			}
			return
		}
		m := &merger{cfg: cfg, yield: yield}
		m.run(ctx, src)
	}
}

// merger is the state of one Events loop.
type merger struct {
	cfg     Config
	yield   func(agent.Event) bool
	pending *agent.Event    // the merged deltas not yet yielded
	text    strings.Builder // pending's text
	last    time.Time       // when a delta was last yielded; zero after any other event
}

func (m *merger) run(ctx context.Context, src Source) {
	for {
		ev, ok, timedOut := m.next(ctx, src)
		switch {
		case timedOut:
			if !m.flush() {
				return
			}
		case !ok:
			m.flush()
			return
		case ev.Kind != agent.EventAssistantTextDelta:
			if !m.flush() || !m.yield(ev) {
				return
			}
			m.last = time.Time{}
		default:
			if !m.delta(ev) {
				return
			}
		}
	}
}

// next waits for src's next event; with merged text pending, only until
// the window of the last yielded delta closes (timedOut).
func (m *merger) next(ctx context.Context, src Source) (ev agent.Event, ok, timedOut bool) {
	if m.pending == nil {
		ev, ok = src.Next(ctx)
		return ev, ok, false
	}
	wctx, cancel := context.WithDeadline(ctx, m.last.Add(m.cfg.Window))
	ev, ok = src.Next(wctx)
	cancel()
	if !ok && ctx.Err() == nil && wctx.Err() != nil {
		return ev, false, true
	}
	return ev, ok, false
}

// delta yields ev at once when no delta was yielded within the window, and
// otherwise adds it to the merged text, flushing that when it is full.
func (m *merger) delta(ev agent.Event) bool {
	now := time.Now()
	if m.pending == nil && now.Sub(m.last) >= m.cfg.Window {
		m.last = now
		return m.yield(ev)
	}
	if m.pending == nil {
		m.pending = &ev
		m.text.Reset()
	}
	m.text.WriteString(ev.Text)
	if m.text.Len() >= m.cfg.MaxBytes {
		return m.flush()
	}
	return true
}

// flush yields the merged text, if any.
func (m *merger) flush() bool {
	if m.pending == nil {
		return true
	}
	ev := *m.pending
	ev.Text = m.text.String()
	m.pending = nil
	m.last = time.Now()
	return m.yield(ev)
}
