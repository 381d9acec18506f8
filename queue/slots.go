package queue

import (
	"context"
	"fmt"
	"sync"
)

// Slots is a counting semaphore of session slots. A worker acquires a slot before it pulls, so
// it never holds a message it has no capacity to run (see Pulling work in the package doc).
// Safe for concurrent use.
type Slots struct {
	sem chan struct{}
}

// NewSlots makes n slots; n must be >= 1.
func NewSlots(n int) (*Slots, error) {
	if n < 1 {
		return nil, fmt.Errorf("queue: slots must be >= 1, got %d", n)
	}
	return &Slots{sem: make(chan struct{}, n)}, nil
}

// Acquire waits for a free slot or for ctx to end. The returned release frees the slot; calling
// it more than once frees it once.
func (s *Slots) Acquire(ctx context.Context) (release func(), err error) {
	select {
	case s.sem <- struct{}{}:
		return s.releaser(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// InUse is the number of slots held now.
func (s *Slots) InUse() int { return len(s.sem) }

// Cap is the number of slots.
func (s *Slots) Cap() int { return cap(s.sem) }

// releaser returns a function that frees one held slot, once.
func (s *Slots) releaser() func() { return sync.OnceFunc(func() { <-s.sem }) }

// reserve waits for one free slot, then takes up to max-1 more that are free now, without
// waiting. The caller owns the reservation: it hands one slot to each message it takes and
// gives the rest back with putBack.
func (s *Slots) reserve(ctx context.Context, max int) (*reservation, error) {
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	r := &reservation{s: s, n: 1}
	for r.n < max {
		select {
		case s.sem <- struct{}{}:
			r.n++
		default:
			return r, nil
		}
	}
	return r, nil
}

// reservation is slots held for one fetch and not yet handed to a Delivery. It belongs to one
// goroutine.
type reservation struct {
	s *Slots
	n int // slots held and not handed out
}

// take hands one held slot to a Delivery; the returned release frees it. It returns nil when
// no slot is left.
func (r *reservation) take() func() {
	if r.n == 0 {
		return nil
	}
	r.n--
	return r.s.releaser()
}

// putBack frees every slot not handed out.
func (r *reservation) putBack() {
	for ; r.n > 0; r.n-- {
		<-r.s.sem
	}
}

// keep frees held slots beyond n.
func (r *reservation) keep(n int) {
	for ; r.n > n; r.n-- {
		<-r.s.sem
	}
}
