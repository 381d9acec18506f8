package queue

import (
	"context"
	"fmt"
	"sync"
)

// Slots is a counting semaphore of session slots. A worker acquires a slot before it pulls, so
// it never holds a message it has no capacity to run (DESIGN.md section 6). Safe for concurrent
// use.
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
		return sync.OnceFunc(func() { <-s.sem }), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// InUse is the number of slots held now.
func (s *Slots) InUse() int { return len(s.sem) }

// Cap is the number of slots.
func (s *Slots) Cap() int { return cap(s.sem) }
