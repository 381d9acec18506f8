package fanout

import (
	"context"
	"iter"
	"sync"
	"sync/atomic"
)

// Subscription receives a hub's values in order from its own queue. Safe
// for one reader; Close may be called from any goroutine.
type Subscription[T any] struct {
	hub     *Hub[T]
	notify  chan struct{}
	dropped atomic.Int64

	mu     sync.Mutex // guards queue, closed
	queue  []T
	closed bool
}

// push queues v, or drops and counts it when it is droppable and the
// queue holds the hub's Buffer values. Called under the hub's lock.
func (s *Subscription[T]) push(v T) {
	cfg := &s.hub.cfg
	s.mu.Lock()
	if cfg.Droppable != nil && len(s.queue) >= cfg.Buffer && cfg.Droppable(v) {
		s.mu.Unlock()
		s.dropped.Add(1)
		return
	}
	s.queue = append(s.queue, v)
	s.mu.Unlock()
	s.wake()
}

func (s *Subscription[T]) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *Subscription[T]) end() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.wake()
}

// Next returns the next value, waiting for one. ok is false once the hub
// has closed and the queue is drained, the subscription was closed, or ctx
// ended.
func (s *Subscription[T]) Next(ctx context.Context) (v T, ok bool) {
	var zero T
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			v = s.queue[0]
			s.queue[0] = zero
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return v, true
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return zero, false
		}
		select {
		case <-s.notify:
		case <-ctx.Done():
			return zero, false
		}
	}
}

// All iterates values until the hub closes (after the queue is drained),
// the subscription is closed or ctx ends.
func (s *Subscription[T]) All(ctx context.Context) iter.Seq[T] {
	return func(yield func(T) bool) {
		for {
			v, ok := s.Next(ctx)
			if !ok || !yield(v) {
				return
			}
		}
	}
}

// Dropped counts the values dropped because this subscriber fell behind.
func (s *Subscription[T]) Dropped() int64 { return s.dropped.Load() }

// Close stops delivery; queued values are discarded.
func (s *Subscription[T]) Close() {
	s.hub.mu.Lock()
	delete(s.hub.subs, s)
	s.hub.mu.Unlock()
	s.mu.Lock()
	s.queue, s.closed = nil, true
	s.mu.Unlock()
	s.wake()
}
