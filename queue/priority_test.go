package queue_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
)

// serveOrder serves queue "default" with one slot, acknowledging each
// delivery at once, and returns the task ids in the order they came once n
// came.
func serveOrder(t *testing.T, b *bundle, p *queue.Puller, n int) []string {
	t.Helper()
	slots, err := queue.NewSlots(1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.ctx)
	var mu sync.Mutex
	var order []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.Serve(ctx, slots, func(d *queue.Delivery) {
			mu.Lock()
			order = append(order, d.Message.TaskID)
			mu.Unlock()
			if err := d.Ack(ctx); err != nil && ctx.Err() == nil {
				t.Errorf("Ack: %v", err)
			}
		}, nil)
	}()
	testenv.Eventually(t, waitTimeout, fmt.Sprintf("%d deliveries", n), func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(order) >= n
	})
	cancel()
	<-done
	return order
}

// enqueueAt enqueues count start messages named prefix-i on the band of priority.
func enqueueAt(t *testing.T, b *bundle, prefix string, priority, count int) {
	t.Helper()
	for i := range count {
		id := fmt.Sprintf("%s-%d", prefix, i)
		if _, err := b.client.Send(b.ctx, queue.ToQueueAt("default", priority), startMsg(id), ""); err != nil {
			t.Fatal(err)
		}
	}
}

func newDefaultPuller(t *testing.T, b *bundle) *queue.Puller {
	t.Helper()
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServeTakesTheHighestBandFirst(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newDefaultPuller(t, b)
	enqueueAt(t, b, "low", -5, 3)
	enqueueAt(t, b, "normal", 0, 5)
	enqueueAt(t, b, "high", 100, 5) // published last, started first
	waitCounted(t, b.client.QueueLag, "default", 13)

	order := serveOrder(t, b, p, 13)
	want := "high-0 high-1 high-2 high-3 high-4 normal-0 normal-1 normal-2 normal-3 normal-4 low-0 low-1 low-2"
	if got := strings.Join(order, " "); got != want {
		t.Fatalf("order = %s\nwant    %s", got, want)
	}
}

func TestServeGivesALowerBandItsShare(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newDefaultPuller(t, b)
	enqueueAt(t, b, "low", -1, 2)
	enqueueAt(t, b, "high", 1, 40)
	waitCounted(t, b.client.QueueLag, "default", 42)

	order := serveOrder(t, b, p, 42)
	// bandShareEvery is 10: the first low message starts after at most
	// ten high ones and the second at most eleven later, though high
	// messages are still queued.
	first, second := -1, -1
	for i, id := range order {
		if strings.HasPrefix(id, "low-") {
			if first < 0 {
				first = i
			} else if second < 0 {
				second = i
			}
		}
	}
	if first < 0 || first > 10 || second < 0 || second-first > 11 {
		t.Fatalf("low messages at %d and %d of %v: the low band must get one of every 11 while high work is queued", first, second, order)
	}
	if order[0] != "high-0" {
		t.Fatalf("first delivery %s, want high-0", order[0])
	}
}

func TestMessagesOfTheLayoutBeforeBandsAreServed(t *testing.T) {
	b := setup(t, queue.Config{})
	// A dispatcher older than bands published on <prefix>.tasks.<queue>,
	// before any worker made the band consumers.
	if _, err := b.client.Enqueue(b.ctx, "default", startMsg("old"), ""); err != nil {
		t.Fatal(err)
	}
	subj := b.client.Subjects().Tasks("default")
	if subj != "agentfleet.tasks.default" {
		t.Fatalf("the normal band's subject changed to %s: messages queued before an upgrade would be stranded", subj)
	}
	p := newDefaultPuller(t, b)
	enqueueAt(t, b, "new-high", 3, 1)
	waitCounted(t, b.client.QueueLag, "default", 2)
	order := serveOrder(t, b, p, 2)
	if got := strings.Join(order, " "); got != "new-high-0 old" {
		t.Fatalf("order = %s, want the high message, then the one queued before the upgrade", got)
	}
	lag, err := b.client.BandLag(b.ctx, "default", queue.BandHigh)
	if err != nil || lag.Total() != 0 {
		t.Fatalf("high band lag = %+v, %v; want empty", lag, err)
	}
}

func TestBandOf(t *testing.T) {
	for p, want := range map[int]queue.Band{-1000: queue.BandLow, -1: queue.BandLow, 0: queue.BandNormal, 1: queue.BandHigh, 1000: queue.BandHigh} {
		if got := queue.BandOf(p); got != want {
			t.Errorf("BandOf(%d) = %s, want %s", p, got, want)
		}
	}
}
