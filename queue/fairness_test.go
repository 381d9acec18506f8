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

// enqueueKey enqueues count start messages named prefix-i under key.
func enqueueKey(t *testing.T, b *bundle, prefix, key string, count int) {
	t.Helper()
	for i := range count {
		id := fmt.Sprintf("%s-%d", prefix, i)
		if _, err := b.client.Send(b.ctx, queue.ToQueueFor("default", 0, key), startMsg(id), ""); err != nil {
			t.Fatal(err)
		}
	}
}

func TestServeSharesSlotsBetweenKeysByWeight(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newKeyedPuller(t, b, map[string]queue.KeyLimit{"heavy": {Weight: 2}})
	enqueueKey(t, b, "a", "a", 30) // a big backlog first
	enqueueKey(t, b, "heavy", "heavy", 20)
	enqueueKey(t, b, "b", "b", 5) // a small tenant after it
	order := serveOrder(t, b, p, 20)[:20]
	count := map[string]int{}
	for _, id := range order {
		count[strings.SplitN(id, "-", 2)[0]]++
	}
	// Weights 1, 2, 1: of 20 starts, a and b get 5 each, heavy 10 (one
	// either way for the order the loop met the keys in).
	if count["b"] < 4 || count["a"] < 4 || count["heavy"] < 9 || count["heavy"] > 11 {
		t.Fatalf("first 20 starts by key %v (%v); want a 5, heavy 10, b 5", count, order)
	}
}

func TestAKeyAtItsMaximumHoldsWithoutSpendingDeliveries(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newKeyedPuller(t, b, map[string]queue.KeyLimit{"capped": {MaxRunning: 2}})
	enqueueKey(t, b, "capped", "capped", 6)
	enqueueKey(t, b, "free", "free", 4)
	slots, err := queue.NewSlots(10)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(b.ctx)
	var mu sync.Mutex
	var held []*queue.Delivery // never settled while the test looks: the tasks run
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.Serve(ctx, slots, func(d *queue.Delivery) {
			mu.Lock()
			held = append(held, d)
			mu.Unlock()
		}, func(err error) { t.Errorf("pull: %v", err) })
	}()
	running := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for _, d := range held {
			out[strings.SplitN(d.Message.TaskID, "-", 2)[0]]++
			if d.NumDelivered != 1 {
				t.Errorf("%s delivered %d times", d.Message.TaskID, d.NumDelivered)
			}
		}
		return out
	}
	testenv.Eventually(t, waitTimeout, "the free key's 4 and the capped key's 2 to run", func() bool {
		r := running()
		return r["free"] == 4 && r["capped"] == 2
	})
	// The capped key holds 4 queued, the server delivers none of them
	// (each delivery is checked to be a first one), and 4 slots stay free.
	lag, err := b.client.QueueLag(b.ctx, "default")
	if err != nil || lag.Pending != 0 {
		t.Logf("lag %+v, %v", lag, err) // the keyed consumers are not the bands'
	}
	mu.Lock()
	var first *queue.Delivery
	for _, d := range held {
		if strings.HasPrefix(d.Message.TaskID, "capped-") {
			first = d
			break
		}
	}
	mu.Unlock()
	if err := first.Ack(ctx); err != nil { // one task ends: its key may start one more
		t.Fatal(err)
	}
	testenv.Eventually(t, waitTimeout, "one more capped task after one ended", func() bool {
		return running()["capped"] >= 3
	})
	if r := running(); r["capped"] != 3 {
		t.Fatalf("running by key %v after one of 2 capped ended; want capped 3 (2 running)", r)
	}
	// 6 run; the loop, idle, holds one more in its waiting pull request.
	testenv.Eventually(t, waitTimeout, "the capped key's queued tasks to hold no slot", func() bool {
		return slots.InUse() <= 7
	})
	cancel()
	<-done
	for _, d := range held {
		if d != first {
			d.Abandon()
		}
	}
}

// QueueLag counts every subject of a queue: bands and keys, also a key no
// worker has made a consumer for yet.
func TestQueueLagCountsKeysAndBands(t *testing.T) {
	b := setup(t, queue.Config{})
	newDefaultPuller(t, b) // makes the band consumers, not the keys'
	enqueueKey(t, b, "k", "team", 3)
	enqueueAt(t, b, "high", 5, 2)
	if _, err := b.client.Enqueue(b.ctx, "default", startMsg("plain"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.Enqueue(b.ctx, "other", startMsg("elsewhere"), ""); err != nil {
		t.Fatal(err)
	}
	waitCounted(t, b.client.QueueLag, "default", 6)
}

// Pull, one message at a time, finds keyed work too: a root task's
// messages are keyed, and a Pull that asked only the unkeyed bands would
// wait for ever.
func TestPullFindsKeyedWork(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newDefaultPuller(t, b)
	enqueueKey(t, b, "team", "team-a", 1)
	d, err := p.Pull(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.Message.TaskID != "team-0" {
		t.Fatalf("Pull gave %q, want team-0", d.Message.TaskID)
	}
	if err := d.Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
}

// TestAFrontLaneGoesBeforeItsLevel: messages on a key's front lane (tasks
// a pause held, released) start before everything else queued at their
// level, whatever key, and in the order they were published; a higher
// level still goes first.
func TestAFrontLaneGoesBeforeItsLevel(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newDefaultPuller(t, b)
	enqueueKey(t, b, "team", "team", 3)
	enqueueKey(t, b, "other", "other", 2)
	for i := range 2 {
		to := queue.ToQueueFor("default", 0, "team").Front()
		if _, err := b.client.Send(b.ctx, to, startMsg(fmt.Sprintf("released-%d", i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	enqueueAt(t, b, "urgent", 9, 1)
	waitCounted(t, b.client.QueueLag, "default", 8)
	order := serveOrder(t, b, p, 8)
	if got := strings.Join(order[:3], " "); got != "urgent-0 released-0 released-1" {
		t.Fatalf("order %v: want the higher level, then the front lane in order, then the rest", order)
	}
}

// TestKeyCappedReadsTheWorkersMaximum: a key has a maximum once a worker
// made its consumer with one; a key no worker served, or one without a
// maximum, has none.
func TestKeyCappedReadsTheWorkersMaximum(t *testing.T) {
	b := setup(t, queue.Config{})
	capped, free := queue.ToQueueFor("default", 0, "capped"), queue.ToQueueFor("default", 0, "free")
	if got, err := b.client.KeyCapped(b.ctx, capped); err != nil || got {
		t.Fatalf("KeyCapped before any worker = %v, %v; want false", got, err)
	}
	p := newKeyedPuller(t, b, map[string]queue.KeyLimit{"capped": {MaxRunning: 2}})
	enqueueKey(t, b, "capped", "capped", 1)
	enqueueKey(t, b, "free", "free", 1)
	waitCounted(t, b.client.QueueLag, "default", 2)
	serveOrder(t, b, p, 2) // makes both keys' consumers
	for to, want := range map[queue.Target]bool{capped: true, capped.Front(): true, free: false, queue.ToQueue("default"): false} {
		if got, err := b.client.KeyCapped(b.ctx, to); err != nil || got != want {
			t.Errorf("KeyCapped(%v) = %v, %v; want %v", to, got, err, want)
		}
	}
}
