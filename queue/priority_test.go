package queue_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

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

func newDefaultPuller(t *testing.T, b *bundle) *queue.Puller { return newKeyedPuller(t, b, nil) }

// newKeyedPuller makes a Puller of queue "default" with the operator's
// settings of keys.
func newKeyedPuller(t *testing.T, b *bundle, keys map[string]queue.KeyLimit) *queue.Puller {
	t.Helper()
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{"default"}, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServeTakesTheHighestLevelFirst(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newDefaultPuller(t, b)
	enqueueAt(t, b, "low", -5, 2)
	enqueueAt(t, b, "p5", 5, 2)
	enqueueAt(t, b, "normal", 0, 2)
	enqueueAt(t, b, "p1", 1, 2)
	enqueueAt(t, b, "p100", 100, 2) // published last, started first
	for i := range 2 {
		to := queue.ToQueueFor("default", 50, "team")
		if _, err := b.client.Send(b.ctx, to, startMsg(fmt.Sprintf("p50-team-%d", i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	waitCounted(t, b.client.QueueLag, "default", 12)

	order := serveOrder(t, b, p, 12)
	want := "p100-0 p100-1 p50-team-0 p50-team-1 p5-0 p5-1 p1-0 p1-1 normal-0 normal-1 low-0 low-1"
	if got := strings.Join(order, " "); got != want {
		t.Fatalf("order = %s\nwant    %s", got, want)
	}
}

func TestServeGivesALowerLevelItsShare(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newDefaultPuller(t, b)
	enqueueAt(t, b, "low", -1, 2)
	enqueueAt(t, b, "high", 1, 40)
	waitCounted(t, b.client.QueueLag, "default", 42)

	order := serveOrder(t, b, p, 42)
	// levelShareEvery is 10: the first low message starts after at most
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
		t.Fatalf("low messages at %d and %d of %v: the low level must get one of every 11 while high work is queued", first, second, order)
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
	lag, err := b.client.LevelLag(b.ctx, "default", 3)
	if err == nil {
		t.Fatalf("LevelLag of level 3 = %+v: only the fixed levels have a consumer of their own", lag)
	}
	if lag, err = b.client.LevelLag(b.ctx, "default", 0); err != nil || lag.Total() != 0 {
		t.Fatalf("level 0 lag = %+v, %v; want empty", lag, err)
	}
}

// TestAHintedLevelStartsAtTheNextRound: a loop busy with priority-0 work
// reads which levels hold messages only now and then; a message at a level
// it does not yet ask comes with a level hint, so it starts at the next
// round, not after the next reading.
func TestAHintedLevelStartsAtTheNextRound(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newDefaultPuller(t, b)
	enqueueAt(t, b, "normal", 0, 40)
	waitCounted(t, b.client.QueueLag, "default", 40)
	hints := make(chan *nats.Msg, 4)
	sub, err := b.nc.ChanSubscribe(b.client.Subjects().Levels("default"), hints)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()

	slots, err := queue.NewSlots(1)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	order := make(chan string, 64)
	go func() {
		_ = p.Serve(ctx, slots, func(d *queue.Delivery) {
			if d.Message.TaskID == "normal-4" {
				// Publish the urgent task while this one holds the only
				// slot, and let the loop go on once the hint is out.
				if _, err := b.client.Send(ctx, queue.ToQueueAt("default", 77), startMsg("urgent-0"), ""); err != nil {
					t.Errorf("Send: %v", err)
				}
				select {
				case <-hints:
				case <-ctx.Done():
				}
			}
			order <- d.Message.TaskID
			_ = d.Ack(ctx)
		}, nil)
	}()
	var got []string
	for len(got) < 20 {
		select {
		case id := <-order:
			got = append(got, id)
		case <-time.After(waitTimeout):
			t.Fatalf("only %v came", got)
		}
	}
	// It starts at the round after normal-4, give or take the few rounds
	// the hint's callback may lag; without the hint, at the next reading
	// (rounds of one message take far less than its 100 ms).
	if i := slices.Index(got, "urgent-0"); i < 0 || i > 12 {
		t.Fatalf("order %v: the urgent task must start within a few rounds of normal-4", got)
	}
}
