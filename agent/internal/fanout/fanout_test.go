package fanout_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/agent/internal/fanout"
)

// item is a test value: odd payloads are droppable.
type item struct {
	seq uint64
	n   int
}

func newHub(buffer int) *fanout.Hub[item] {
	return fanout.New(fanout.Config[item]{
		Buffer:    buffer,
		Droppable: func(v item) bool { return v.n%2 == 1 },
		Stamp:     func(v item, seq uint64) item { v.seq = seq; return v },
	})
}

func ctx10(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// drain reads until the subscription ends.
func drain(t *testing.T, s *fanout.Subscription[item]) []item {
	t.Helper()
	return slices.Collect(s.All(ctx10(t)))
}

func TestFullSubscriberDropsOnlyDroppableValues(t *testing.T) {
	h := newHub(2)
	slow, fast := h.Subscribe(), h.Subscribe()
	for n := range 10 {
		h.Publish(item{n: n})
		if v, ok := fast.Next(ctx10(t)); !ok || v.n != n {
			t.Fatalf("a reader that keeps up got %+v, %v; want n=%d", v, ok, n)
		}
	}
	h.Close()
	if fast.Dropped() != 0 {
		t.Fatalf("a reader that keeps up lost %d values", fast.Dropped())
	}
	// slow never read: 0 and 1 filled its buffer, then the odd (droppable)
	// values were dropped and the even ones queued beyond the buffer.
	rest := drain(t, slow)
	var ns []int
	for _, v := range rest {
		ns = append(ns, v.n)
		if v.seq != uint64(v.n)+1 {
			t.Fatalf("value %d carries seq %d: numbering must count dropped values too", v.n, v.seq)
		}
	}
	if !slices.Equal(ns, []int{0, 1, 2, 4, 6, 8}) || slow.Dropped() != 4 {
		t.Fatalf("slow subscriber got %v, dropped %d; want [0 1 2 4 6 8], 4", ns, slow.Dropped())
	}
}

func TestCloseEndsSubscriptionsAfterTheyDrain(t *testing.T) {
	h := newHub(8)
	s := h.Subscribe()
	h.Publish(item{n: 2})
	h.Close()
	h.Close() // idempotent
	h.Publish(item{n: 4})
	if got := drain(t, s); len(got) != 1 || got[0] != (item{seq: 1, n: 2}) {
		t.Fatalf("after Close got %+v, want only the value published before it", got)
	}
	if _, ok := h.Subscribe().Next(ctx10(t)); ok {
		t.Fatal("a subscription taken after Close delivered a value")
	}
}

func TestSubscriptionCloseDiscardsAndStops(t *testing.T) {
	h := newHub(8)
	s, other := h.Subscribe(), h.Subscribe()
	h.Publish(item{n: 2})
	s.Close()
	h.Publish(item{n: 4})
	if _, ok := s.Next(ctx10(t)); ok {
		t.Fatal("a closed subscription delivered a value")
	}
	h.Close()
	if got := drain(t, other); len(got) != 2 {
		t.Fatalf("another subscriber got %+v, want both values", got)
	}
}

func TestNextWakesForAValueAndEndsWithItsContext(t *testing.T) {
	h := newHub(8)
	s := h.Subscribe()
	got := make(chan item, 1)
	go func() {
		if v, ok := s.Next(ctx10(t)); ok {
			got <- v
		}
		close(got)
	}()
	h.Publish(item{n: 6})
	if v := <-got; v.n != 6 {
		t.Fatalf("a waiting Next got %+v, want n=6", v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, ok := s.Next(ctx); ok {
		t.Fatal("Next with an ended context and an empty queue returned a value")
	}
}

func TestNoDroppableMeansNothingIsDropped(t *testing.T) {
	h := fanout.New(fanout.Config[int]{Buffer: 1})
	s := h.Subscribe()
	for n := range 5 {
		h.Publish(n)
	}
	h.Close()
	got := slices.Collect(s.All(ctx10(t)))
	if !slices.Equal(got, []int{0, 1, 2, 3, 4}) || s.Dropped() != 0 {
		t.Fatalf("got %v, dropped %d", got, s.Dropped())
	}
}
