package llmtest

import (
	"context"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/llm"
)

// Collect drains a stream and returns its non-terminal events, the final
// response (nil on error) and the terminal error. It reports a broken
// contract (no terminal element, or elements after it) as an error of kind
// ErrInvalidResponse whose message says so.
func Collect(seq iter.Seq2[llm.StreamEvent, error]) (events []llm.StreamEvent, resp *llm.Response, err error) {
	terminals := 0
	for ev, e := range seq {
		if terminals > 0 {
			return events, nil, &llm.Error{Kind: llm.ErrInvalidResponse, Message: "llmtest: the stream yielded an element after its terminal one"}
		}
		switch {
		case e != nil:
			err = e
			terminals++
		case ev.Kind == llm.EventFinish:
			resp = ev.Response
			terminals++
		default:
			events = append(events, ev)
		}
	}
	if terminals == 0 {
		return events, nil, &llm.Error{Kind: llm.ErrInvalidResponse, Message: "llmtest: the stream ended without a finish event or an error"}
	}
	return events, resp, err
}

// Call sends req to c whole (Complete) or, when stream, streamed
// (Stream, drained by Collect); events is nil when whole.
func Call(ctx context.Context, c llm.Client, req llm.Request, stream bool) (events []llm.StreamEvent, resp *llm.Response, err error) {
	if !stream {
		resp, err = c.Complete(ctx, req)
		return nil, resp, err
	}
	return Collect(c.Stream(ctx, req))
}

// Deltas concatenates the deltas of the events of one kind.
func Deltas(events []llm.StreamEvent, kind llm.StreamEventKind) string {
	var s strings.Builder
	for _, ev := range events {
		if ev.Kind == kind {
			s.WriteString(ev.Delta)
		}
	}
	return s.String()
}

// Sleeps is an injectable llm.RetryPolicy.Sleep that returns at once (or
// with ctx's error) and records every wait asked for.
type Sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

// Sleep records d and returns without waiting.
func (s *Sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

// Waits returns the waits recorded so far.
func (s *Sleeps) Waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

// FastRetry returns a retry policy with maxAttempts attempts whose waits
// are recorded in the returned Sleeps instead of slept.
func FastRetry(maxAttempts int) (llm.RetryPolicy, *Sleeps) {
	s := &Sleeps{}
	return llm.RetryPolicy{MaxAttempts: maxAttempts, Sleep: s.Sleep}, s
}
