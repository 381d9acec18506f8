package agent

import (
	"context"
	"iter"
	"sync"
	"sync/atomic"
)

// emitter numbers events and fans them out to subscribers. emit never
// blocks: droppable events are dropped for a full subscriber, the others are
// queued beyond the buffer (the queue grows), so the loop never stalls.
type emitter struct {
	mu        sync.Mutex // guards seq, subs, closed; held while pushing so order is global
	seq       uint64
	subs      map[*Subscription]struct{}
	closed    bool
	sessionID string
	clock     Clock
	buffer    int
}

func newEmitter(sessionID string, clock Clock, buffer int) *emitter {
	return &emitter{subs: map[*Subscription]struct{}{}, sessionID: sessionID, clock: clock, buffer: buffer}
}

// emit stamps ev and delivers it to every subscriber.
func (e *emitter) emit(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	e.seq++
	ev.Seq, ev.Time, ev.SessionID = e.seq, e.clock.Now(), e.sessionID
	for s := range e.subs {
		s.push(ev)
	}
}

func (e *emitter) subscribe() *Subscription {
	s := &Subscription{e: e, notify: make(chan struct{}, 1), buffer: e.buffer}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		s.closed = true
		return s
	}
	e.subs[s] = struct{}{}
	return s
}

// close ends every subscription after it drains what is queued.
func (e *emitter) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	for s := range e.subs {
		s.end()
	}
	e.subs = nil
}

// Subscription receives a session's events in order. Each has its own queue:
// deltas (ASSISTANT_TEXT_DELTA, TOOL_CALL_OUTPUT_DELTA) are dropped and
// counted when Config.EventBuffer events are waiting; every other event is
// always queued. Safe for one reader; Close may be called from any goroutine.
type Subscription struct {
	e       *emitter
	notify  chan struct{}
	buffer  int
	dropped atomic.Int64

	mu     sync.Mutex // guards queue, closed
	queue  []Event
	closed bool
}

func (s *Subscription) push(ev Event) {
	s.mu.Lock()
	if ev.Kind.droppable() && len(s.queue) >= s.buffer {
		s.mu.Unlock()
		s.dropped.Add(1)
		return
	}
	s.queue = append(s.queue, ev)
	s.mu.Unlock()
	s.wake()
}

func (s *Subscription) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *Subscription) end() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.wake()
}

// Next returns the next event, waiting for one. ok is false once the session
// has closed (after SESSION_END was delivered), the subscription was closed,
// or ctx ended.
func (s *Subscription) Next(ctx context.Context) (ev Event, ok bool) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			ev = s.queue[0]
			s.queue[0] = Event{}
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return ev, true
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return Event{}, false
		}
		select {
		case <-s.notify:
		case <-ctx.Done():
			return Event{}, false
		}
	}
}

// All iterates events until the session closes, the subscription is closed
// or ctx ends.
func (s *Subscription) All(ctx context.Context) iter.Seq[Event] {
	return func(yield func(Event) bool) {
		for {
			ev, ok := s.Next(ctx)
			if !ok || !yield(ev) {
				return
			}
		}
	}
}

// Dropped counts the deltas dropped because this subscriber fell behind.
func (s *Subscription) Dropped() int64 { return s.dropped.Load() }

// Close stops delivery; queued events are discarded.
func (s *Subscription) Close() {
	s.e.mu.Lock()
	delete(s.e.subs, s)
	s.e.mu.Unlock()
	s.mu.Lock()
	s.queue, s.closed = nil, true
	s.mu.Unlock()
	s.wake()
}
