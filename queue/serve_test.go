package queue_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/queue"
)

// serving runs p.Serve on slots in the background, sending each delivery on the returned
// channel; stop ends Serve and waits for it.
func serving(t *testing.T, p *queue.Puller, slots *queue.Slots) (got <-chan *queue.Delivery, stop func()) {
	t.Helper()
	ch := make(chan *queue.Delivery, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- p.Serve(ctx, slots, func(d *queue.Delivery) { ch <- d }, func(err error) { t.Errorf("pull: %v", err) })
	}()
	stop = sync.OnceFunc(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Serve = %v, want context.Canceled", err)
		}
	})
	t.Cleanup(stop)
	return ch, stop
}

func nextDelivery(t *testing.T, got <-chan *queue.Delivery) *queue.Delivery {
	t.Helper()
	select {
	case d := <-got:
		return d
	case <-time.After(waitTimeout):
		t.Fatal("no delivery in time")
		return nil
	}
}

func TestServeTakesNoMoreThanTheFreeSlots(t *testing.T) {
	b := setup(t, queue.Config{})
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := b.client.Enqueue(b.ctx, "default", startMsg(fmt.Sprintf("t%d", i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	waitCounted(t, b.client.QueueLag, "default", 10) // so the lag read below is exact
	slots, _ := queue.NewSlots(4)
	got, stop := serving(t, p, slots)
	held := make([]*queue.Delivery, 0, 10)
	for range 4 {
		held = append(held, nextDelivery(t, got))
	}
	// Every slot is taken: the server must still hold the other six, none in flight but ours.
	lag, err := b.client.QueueLag(b.ctx, "default")
	if err != nil || lag.Pending != 6 || lag.AckPending != 4 {
		t.Fatalf("lag = %+v, %v; want 6 pending and 4 in flight", lag, err)
	}
	if slots.InUse() != 4 {
		t.Fatalf("InUse = %d, want 4", slots.InUse())
	}
	// Each settled delivery frees a slot for the next message.
	for received := 4; received < 10; received++ {
		if err := held[0].Ack(b.ctx); err != nil {
			t.Fatal(err)
		}
		held = append(held[1:], nextDelivery(t, got))
	}
	for _, d := range held {
		if err := d.Ack(b.ctx); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	if slots.InUse() != 0 {
		t.Fatalf("InUse after Serve = %d, want 0: reserved slots were not given back", slots.InUse())
	}
}

func TestServeWaitsOnEverySourceAtOnce(t *testing.T) {
	// A poll interval far beyond the test's deadline: only concurrent waits can pass.
	b := setup(t, queue.Config{PollInterval: time.Hour, PullWait: time.Hour})
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{"default", "bulk"}, WorkerID: "w-1"})
	if err != nil {
		t.Fatal(err)
	}
	slots, _ := queue.NewSlots(8)
	got, stop := serving(t, p, slots)
	defer stop()
	// Each message goes out after the previous one came, so its source is (or soon is) idle in
	// a waiting pull request, which with serial polling would have ended an hour later.
	enqueue := []func() error{
		func() error { _, err := b.client.EnqueueToWorker(b.ctx, "w-1", startMsg("pinned"), ""); return err },
		func() error { _, err := b.client.Enqueue(b.ctx, "default", startMsg("shared"), ""); return err },
		func() error { _, err := b.client.Enqueue(b.ctx, "bulk", startMsg("bulk"), ""); return err },
	}
	want := map[string]string{"pinned": "worker", "shared": "default", "bulk": "bulk"}
	for _, e := range enqueue {
		if err := e(); err != nil {
			t.Fatal(err)
		}
		d := nextDelivery(t, got)
		if want[d.Message.TaskID] != d.Source {
			t.Fatalf("got %s from %s", d.Message.TaskID, d.Source)
		}
		delete(want, d.Message.TaskID)
		if err := d.Ack(b.ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func TestServeHoldsPullsWhileTheGateIsClosed(t *testing.T) {
	b := setup(t, queue.Config{})
	asked := make(chan struct{}, 1)
	open := make(chan struct{})
	gate := func(ctx context.Context) error {
		select {
		case asked <- struct{}{}:
		default:
		}
		select {
		case <-open:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{"default"}, Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.Enqueue(b.ctx, "default", startMsg("t1"), ""); err != nil {
		t.Fatal(err)
	}
	waitCounted(t, b.client.QueueLag, "default", 1)
	slots, _ := queue.NewSlots(2)
	got, _ := serving(t, p, slots)
	<-asked
	// The loop waits in the gate: nothing was pulled, so the message is still pending.
	lag, err := b.client.QueueLag(b.ctx, "default")
	if err != nil || lag.Pending != 1 || lag.AckPending != 0 || len(got) != 0 {
		t.Fatalf("with the gate closed: lag %+v, %v, %d delivered; want the message pending", lag, err, len(got))
	}
	close(open)
	d := nextDelivery(t, got)
	if err := d.Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
}
