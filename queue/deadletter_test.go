package queue_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
)

// watch starts a dead-letter watcher sending every dead letter to the returned channel.
func watch(t *testing.T, b *bundle, fail *atomic.Int32) <-chan queue.DeadLetter {
	t.Helper()
	got := make(chan queue.DeadLetter, 16)
	w, err := b.client.WatchDeadLetters(b.ctx, func(_ context.Context, dl queue.DeadLetter) error {
		if fail != nil && fail.Add(-1) >= 0 {
			return errors.New("store down")
		}
		got <- dl
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return got
}

func waitDeadLetter(t *testing.T, got <-chan queue.DeadLetter) queue.DeadLetter {
	t.Helper()
	select {
	case dl := <-got:
		return dl
	case <-time.After(waitTimeout):
		t.Fatal("no dead letter")
		return queue.DeadLetter{}
	}
}

func TestNeverAckedTaskBecomesDeadLetterWithTaskID(t *testing.T) {
	b := setup(t, queue.Config{AckWait: 200 * time.Millisecond, MaxDeliver: 2})
	got := watch(t, b, nil)
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := b.client.Enqueue(b.ctx, "default", startMsg("poison"), "")
	if err != nil {
		t.Fatal(err)
	}
	for want := uint64(1); want <= 2; want++ {
		d := pull(t, p)
		if d.NumDelivered != want {
			t.Fatalf("delivery %d has NumDelivered %d", want, d.NumDelivered)
		}
		d.Abandon() // a worker that dies mid-task
	}
	// The server notices the exhausted deliveries when it would deliver again.
	pullCtx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	pulled := make(chan *queue.Delivery, 1)
	go func() {
		d, _ := p.Pull(pullCtx)
		pulled <- d
	}()
	dl := waitDeadLetter(t, got)
	cancel()
	if d := <-pulled; d != nil {
		t.Fatalf("a third delivery happened: %+v", d)
	}
	if dl.Reason != queue.DeadMaxDeliveries || dl.TaskID != "poison" || dl.StreamSeq != res.StreamSeq {
		t.Fatalf("dead letter = %+v", dl)
	}
	if dl.Message == nil || dl.Message.Type != queue.MsgStart || dl.Deliveries != 2 || dl.Consumer != "queue-default" {
		t.Fatalf("dead letter details = %+v", dl)
	}
	// After handling, the message is gone from TASKS.
	tasks := tasksStream(t, b)
	testenv.Eventually(t, waitTimeout, "the handled dead letter to leave TASKS", func() bool {
		_, err := tasks.GetMsg(b.ctx, res.StreamSeq)
		return errors.Is(err, jetstream.ErrMsgNotFound)
	})
}

func TestTermedCorruptMessageIsDeadLetterWithReason(t *testing.T) {
	b := setup(t, queue.Config{DeadLetterRetryDelay: 100 * time.Millisecond})
	var fail atomic.Int32
	fail.Store(1) // the first handling fails and is retried
	got := watch(t, b, &fail)
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	m := natsMsg(b.client.Subjects().Tasks("default"), []byte("{not json"))
	m.Header.Set(queue.HeaderTaskID, "t-corrupt")
	if err := b.nc.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	d := pull(t, p)
	if !errors.Is(d.DecodeErr, queue.ErrBadMessage) || d.TaskID != "t-corrupt" || string(d.Raw) != "{not json" {
		t.Fatalf("delivery = %+v", d)
	}
	if err := d.Term(b.ctx, "corrupt task message: "+d.DecodeErr.Error()); err != nil {
		t.Fatal(err)
	}
	dl := waitDeadLetter(t, got)
	if dl.Reason != queue.DeadTerminated || dl.TaskID != "t-corrupt" {
		t.Fatalf("dead letter = %+v", dl)
	}
	if want := "corrupt task message: "; len(dl.TermReason) < len(want) || dl.TermReason[:len(want)] != want {
		t.Fatalf("TermReason = %q", dl.TermReason)
	}
	if fail.Load() >= 0 {
		t.Fatal("the failing first handling was not exercised")
	}
}
