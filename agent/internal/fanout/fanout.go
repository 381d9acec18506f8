package fanout

import "sync"

// Config says how a Hub treats the values it publishes.
type Config[T any] struct {
	// Buffer is the queue length from which droppable values are dropped
	// for a subscriber.
	Buffer int
	// Droppable reports whether v may be dropped for a full subscriber;
	// nil means nothing is.
	Droppable func(v T) bool
	// Stamp returns v carrying its sequence number seq; it runs under the
	// hub's lock, so it must be quick and must not call the hub. Nil
	// leaves values as published.
	Stamp func(v T, seq uint64) T
}

// Hub fans values out to subscribers. Publish never blocks on a
// subscriber. Safe for concurrent use.
type Hub[T any] struct {
	cfg Config[T]

	mu     sync.Mutex // guards seq, subs, closed; held while pushing so order is global
	seq    uint64
	subs   map[*Subscription[T]]struct{}
	closed bool
}

// New returns an open hub without subscribers.
func New[T any](cfg Config[T]) *Hub[T] {
	return &Hub[T]{cfg: cfg, subs: map[*Subscription[T]]struct{}{}}
}

// Publish stamps v with the next sequence number and queues it for every
// subscriber. After Close it does nothing (and takes no number).
func (h *Hub[T]) Publish(v T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.seq++
	if h.cfg.Stamp != nil {
		v = h.cfg.Stamp(v, h.seq)
	}
	for s := range h.subs {
		s.push(v)
	}
}

// Subscribe returns a subscription that receives every value published from
// now on. After Close it returns one that is already ended.
func (h *Hub[T]) Subscribe() *Subscription[T] {
	s := &Subscription[T]{hub: h, notify: make(chan struct{}, 1)}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		s.closed = true
		return s
	}
	h.subs[s] = struct{}{}
	return s
}

// Close ends every subscription after its reader drains what is queued.
// Idempotent.
func (h *Hub[T]) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		s.end()
	}
	h.subs = nil
}
