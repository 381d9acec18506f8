package tools

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
)

// Settled returns the tool build makes for default settings (Settings{}),
// with Tool.Settle set to build it again for a session's settings. Use it
// for a tool whose description or schema states a setting (the shell's
// default and maximum timeout), so what the model reads is what the
// session does.
func Settled(build func(Settings) Tool) Tool {
	var settle func(Settings) Tool
	settle = func(s Settings) Tool {
		t := build(s)
		t.Settle = settle
		return t
	}
	return settle(Settings{})
}

// Settle replaces every tool that has a Tool.Settle by the tool it builds
// for s, keeping its place. A session calls it with its settings, and
// again when they change.
func (r *Registry) Settle(s Settings) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, t := range r.tools {
		if t.Settle != nil {
			r.tools[name] = t.Settle(s)
		}
	}
}

// Timeouts returns the default and maximum command timeouts s sets, with
// def for a default s leaves at 0 and execenv.MaxTimeout for a maximum it
// leaves at 0; the default never exceeds the maximum (as RunShell caps it).
func (s Settings) Timeouts(def time.Duration) (time.Duration, time.Duration) {
	d, m := time.Duration(s.DefaultCommandTimeoutMs)*time.Millisecond, time.Duration(s.MaxCommandTimeoutMs)*time.Millisecond
	if d <= 0 {
		d = def
	}
	if m <= 0 {
		m = execenv.MaxTimeout
	}
	return min(d, m), m
}

// FillTimeouts replaces the placeholders of a description or schema text
// with the timeouts of s (def is the tool's default when s sets none):
// {default_ms}, {max_ms}, {default_s}, {max_s}, and {default} and {max} as
// words ("10 seconds", "2 minutes").
func (s Settings) FillTimeouts(text string, def time.Duration) string {
	if !strings.Contains(text, "{") {
		return text
	}
	d, m := s.Timeouts(def)
	key := filled{text, d, m}
	if out, ok := filledTexts.Load(key); ok {
		return out.(string)
	}
	out := strings.NewReplacer(
		"{default_ms}", fmt.Sprint(d.Milliseconds()), "{max_ms}", fmt.Sprint(m.Milliseconds()),
		"{default_s}", fmt.Sprint(int(d.Seconds())), "{max_s}", fmt.Sprint(int(m.Seconds())),
		"{default}", words(d), "{max}", words(m),
	).Replace(text)
	filledTexts.Store(key, out)
	return out
}

// filled is one FillTimeouts result's key. Every session settles its
// tools, and the texts and timeouts a worker uses are few, so the results
// are kept for the process's life: building a Replacer per tool per
// session was a measurable share of a trivial task's CPU.
type filled struct {
	text     string
	def, max time.Duration
}

var filledTexts sync.Map // filled -> string

// words renders d as "N seconds", "N minutes" or "N hours", exactly when
// possible, else in seconds.
func words(d time.Duration) string {
	unit := func(n int64, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return unit(int64(d/time.Hour), "hour")
	case d >= time.Minute && d%time.Minute == 0:
		return unit(int64(d/time.Minute), "minute")
	case d%time.Second == 0:
		return unit(int64(d/time.Second), "second")
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}
