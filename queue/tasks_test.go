package queue_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
)

func TestEnqueueDedupesRetriedSubmit(t *testing.T) {
	b := setup(t, queue.Config{})
	first, err := b.client.Enqueue(b.ctx, "default", startMsg("t1"), "submit:key-1")
	if err != nil || first.Duplicate {
		t.Fatalf("first Enqueue = %+v, %v", first, err)
	}
	again, err := b.client.Enqueue(b.ctx, "default", startMsg("t1"), "submit:key-1")
	if err != nil || !again.Duplicate || again.StreamSeq != first.StreamSeq {
		t.Fatalf("retried Enqueue = %+v, %v; want duplicate of seq %d", again, err, first.StreamSeq)
	}
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	d := pull(t, p)
	if d.Message.TaskID != "t1" || d.NumDelivered != 1 {
		t.Fatalf("delivery = %+v", d)
	}
	if err := d.Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
	lag, err := b.client.QueueLag(b.ctx, "default")
	if err != nil {
		t.Fatal(err)
	}
	if lag.Total() != 0 {
		t.Fatalf("lag after one ack = %+v, want empty: the duplicate must not be stored", lag)
	}
	if got := b.client.Metrics().EnqueueDuplicates.Load(); got != 1 {
		t.Fatalf("EnqueueDuplicates = %d, want 1", got)
	}
}

func TestEnqueueRejectsBadInput(t *testing.T) {
	b := setup(t, queue.Config{})
	cases := []struct {
		name  string
		queue string
		msg   queue.TaskMessage
		want  string
	}{
		{"wildcard queue", "a.*", startMsg("t1"), "queue name"},
		{"reserved queue", "worker", startMsg("t1"), "reserved"},
		{"no task id", "default", queue.TaskMessage{Type: queue.MsgStart}, "TaskID"},
		{"unknown type", "default", queue.TaskMessage{Type: "explode", TaskID: "t"}, "Type"},
		{"resume without wait", "default", queue.TaskMessage{Type: queue.MsgResume, TaskID: "t"}, "WaitID"},
	}
	for _, tc := range cases {
		_, err := b.client.Enqueue(b.ctx, tc.queue, tc.msg, "")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Enqueue = %v, want error mentioning %q", tc.name, err, tc.want)
		}
	}
}

func TestResumeOfTwoChildrenEndingTogetherIsEnqueuedOnce(t *testing.T) {
	b := setup(t, queue.Config{})
	other := b.openClient(t, queue.Config{})
	resume := queue.TaskMessage{Type: queue.MsgResume, TaskID: "parent", WaitID: "w1"}
	var wg sync.WaitGroup
	results := make([]queue.EnqueueResult, 2)
	errs := make([]error, 2)
	start := make(chan struct{})
	for i, c := range []*queue.Client{b.client, other} {
		wg.Go(func() {
			<-start
			m := resume
			m.ChildTaskID = fmt.Sprintf("child-%d", i)
			results[i], errs[i] = c.Send(b.ctx, queue.ToQueue("default"), m, "resume:parent:w1")
		})
	}
	close(start)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if results[0].Duplicate == results[1].Duplicate {
		t.Fatalf("results %+v: want exactly one original and one duplicate", results)
	}
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	d := pull(t, p)
	if d.Message.Type != queue.MsgResume || d.Message.TaskID != "parent" || d.Message.WaitID != "w1" {
		t.Fatalf("delivery = %+v", d.Message)
	}
	if err := d.Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
	lag, err := b.client.QueueLag(b.ctx, "default")
	if err != nil || lag.Total() != 0 {
		t.Fatalf("lag = %+v, %v; want nothing left", lag, err)
	}
	// A later wait of the same parent is a different resume.
	r, err := b.client.Send(b.ctx, queue.ToQueue("default"), queue.TaskMessage{Type: queue.MsgResume, TaskID: "parent", WaitID: "w2"}, "resume:parent:w2")
	if err != nil || r.Duplicate {
		t.Fatalf("resume of the next wait = %+v, %v", r, err)
	}
}

func TestPullerPrefersWorkerSubjectAndServesBoth(t *testing.T) {
	b := setup(t, queue.Config{PollInterval: 200 * time.Millisecond})
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{"default"}, WorkerID: "w-1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.Enqueue(b.ctx, "default", startMsg("shared"), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.EnqueueToWorker(b.ctx, "w-1", startMsg("pinned"), ""); err != nil {
		t.Fatal(err)
	}
	// Preference among sources covers messages the consumers already count.
	waitCounted(t, b.client.WorkerLag, "w-1", 1)
	waitCounted(t, b.client.QueueLag, "default", 1)
	first, second := pull(t, p), pull(t, p)
	if first.Message.TaskID != "pinned" || first.Source != "worker" {
		t.Fatalf("first = %s from %s, want pinned from worker", first.Message.TaskID, first.Source)
	}
	if second.Message.TaskID != "shared" || second.Source != "default" {
		t.Fatalf("second = %s from %s, want shared from default", second.Message.TaskID, second.Source)
	}
	for _, d := range []*queue.Delivery{first, second} {
		if err := d.Ack(b.ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Idle, then work arrives on the worker subject only: the round-robin wait finds it.
	got := make(chan *queue.Delivery, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		d, err := p.Pull(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- d
	}()
	if _, err := b.client.EnqueueToWorker(b.ctx, "w-1", startMsg("late"), ""); err != nil {
		t.Fatal(err)
	}
	d := <-got
	if d == nil || d.Message.TaskID != "late" {
		t.Fatalf("late delivery = %+v", d)
	}
	if err := d.Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
}

func TestClaimReservesSlotBeforePulling(t *testing.T) {
	b := setup(t, queue.Config{})
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if _, err := b.client.Enqueue(b.ctx, "default", startMsg(fmt.Sprintf("t%d", i)), ""); err != nil {
			t.Fatal(err)
		}
	}
	waitCounted(t, b.client.QueueLag, "default", 2) // so the lag read below is exact
	slots, err := queue.NewSlots(1)
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.Claim(b.ctx, slots)
	if err != nil {
		t.Fatal(err)
	}
	if slots.InUse() != 1 {
		t.Fatalf("InUse = %d, want 1", slots.InUse())
	}
	// No free slot: Claim must not pull the second message.
	short, cancel := context.WithTimeout(b.ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := p.Claim(short, slots); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Claim without a slot = %v, want deadline exceeded", err)
	}
	lag, err := b.client.QueueLag(b.ctx, "default")
	if err != nil || lag.Pending != 1 || lag.AckPending != 1 {
		t.Fatalf("lag = %+v, %v; want 1 pending and 1 in flight", lag, err)
	}
	if err := d.Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
	if slots.InUse() != 0 {
		t.Fatalf("InUse after ack = %d, want 0", slots.InUse())
	}
	if err := d.Ack(b.ctx); !errors.Is(err, queue.ErrSettled) {
		t.Fatalf("second Ack = %v, want ErrSettled", err)
	}
	d2, err := p.Claim(b.ctx, slots)
	if err != nil || d2.Message.TaskID != "t1" {
		t.Fatalf("second Claim = %+v, %v", d2, err)
	}
	if err := d2.Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
}

func TestHeartbeatsKeepALongTaskFromRedelivery(t *testing.T) {
	// AckWait leaves a heartbeat (every AckWait/3) two thirds of it to reach the server: a
	// shorter one fails when a loaded machine delays the heartbeat goroutine that long.
	const ackWait = time.Second
	b := setup(t, queue.Config{AckWait: ackWait})
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.Enqueue(b.ctx, "default", startMsg("long"), ""); err != nil {
		t.Fatal(err)
	}
	d := pull(t, p)
	// Held for three AckWaits while pulling again: without heartbeats the server would
	// redeliver it to this second pull.
	short, cancel := context.WithTimeout(b.ctx, 3*ackWait)
	defer cancel()
	if again, err := p.Pull(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second Pull = %+v, %v; want no redelivery while heartbeats run", again, err)
	}
	if n := b.client.Metrics().HeartbeatErrors.Load(); n != 0 {
		t.Fatalf("HeartbeatErrors = %d", n)
	}
	if err := d.Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
	if d.NumDelivered != 1 {
		t.Fatalf("NumDelivered = %d", d.NumDelivered)
	}
}

func TestNakWithDelayRedelivers(t *testing.T) {
	b := setup(t, queue.Config{})
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.Enqueue(b.ctx, "default", startMsg("rate-limited"), ""); err != nil {
		t.Fatal(err)
	}
	d := pull(t, p)
	naked := time.Now()
	if err := d.Nak(b.ctx, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	again := pull(t, p)
	if again.NumDelivered != 2 || again.Message.TaskID != "rate-limited" {
		t.Fatalf("redelivery = %+v", again)
	}
	// The delay is the server's promise; check the order of events, not a speed.
	if since := time.Since(naked); since < 400*time.Millisecond {
		t.Fatalf("redelivered %s after the nak, before the 500ms delay", since)
	}
	if err := again.Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
	if b.client.Metrics().Redelivered.Load() != 1 {
		t.Fatalf("Redelivered = %d", b.client.Metrics().Redelivered.Load())
	}
}

// TestMoveWorkerMessagesTakesWorkInFlightAtDeath: a message the worker had pulled when it died
// comes back after AckWait, and the move waits for it instead of deleting the consumer under it.
func TestMoveWorkerMessagesTakesWorkInFlightAtDeath(t *testing.T) {
	b := setup(t, queue.Config{AckWait: time.Second})
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{WorkerID: "w-dead"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.EnqueueToWorker(b.ctx, "w-dead", startMsg("in-flight"), ""); err != nil {
		t.Fatal(err)
	}
	pull(t, p).Abandon() // pulled, then the worker died
	n, err := b.client.MoveWorkerMessages(b.ctx, "w-dead", toDefault)
	if err != nil || n != 1 {
		t.Fatalf("MoveWorkerMessages = %d, %v; want 1 moved", n, err)
	}
	if d := pullFrom(t, b, "default"); d.Message.TaskID != "in-flight" {
		t.Fatalf("moved %+v", d.Message)
	}
}

func toDefault(queue.TaskMessage) (queue.Target, error) { return queue.ToQueue("default"), nil }

// pullFrom pulls one message of a shared queue and acks it.
func pullFrom(t *testing.T, b *bundle, name string) *queue.Delivery {
	t.Helper()
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{name}})
	if err != nil {
		t.Fatal(err)
	}
	d := pull(t, p)
	if err := d.Ack(b.ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestOrphanedWorkMovesToTheSharedQueue: pinned work of a worker whose consumer is gone (the
// server deleted it after WorkerInactiveThreshold) is found and moved, bodies unchanged, once.
func TestOrphanedWorkMovesToTheSharedQueue(t *testing.T) {
	b := setup(t, queue.Config{})
	// A live worker's pinned work is not orphaned.
	if _, err := b.client.NewPuller(b.ctx, queue.PullerConfig{WorkerID: "w-live"}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.EnqueueToWorker(b.ctx, "w-live", startMsg("kept"), ""); err != nil {
		t.Fatal(err)
	}
	// A gone worker's: a start, a resume and a corrupt body (moved as it is, for a worker to fail).
	if _, err := b.client.EnqueueToWorker(b.ctx, "w-gone", startMsg("c1"), ""); err != nil {
		t.Fatal(err)
	}
	resume := queue.TaskMessage{Type: queue.MsgResume, TaskID: "parent", WaitID: "w1"}
	if _, err := b.client.Send(b.ctx, queue.ToWorker("w-gone"), resume, "resume:parent:w1"); err != nil {
		t.Fatal(err)
	}
	corrupt := natsMsg(b.client.Subjects().Worker("w-gone"), []byte(`{"type":`))
	corrupt.Header.Set(queue.HeaderTaskID, "c3")
	if err := b.nc.PublishMsg(corrupt); err != nil {
		t.Fatal(err)
	}
	var orphaned []string
	testenv.Eventually(t, waitTimeout, "one orphaned worker subject", func() bool { // the core publish above is stored shortly after
		var err error
		orphaned, err = b.client.OrphanedWorkers(b.ctx)
		return err == nil && len(orphaned) == 1
	})
	if orphaned[0] != "w-gone" {
		t.Fatalf("OrphanedWorkers = %v, want [w-gone]", orphaned)
	}
	var routed []string
	n, err := b.client.MoveWorkerMessages(b.ctx, "w-gone", func(m queue.TaskMessage) (queue.Target, error) {
		routed = append(routed, m.TaskID)
		return queue.ToQueue("default"), nil
	})
	if err != nil || n != 3 || strings.Join(routed, ",") != "c1,parent,c3" {
		t.Fatalf("MoveWorkerMessages = %d, %v, routed %v; want c1, parent, c3", n, err, routed)
	}
	if d := pullFrom(t, b, "default"); d.Message.Type != queue.MsgStart || d.Message.TaskID != "c1" {
		t.Fatalf("first moved = %+v", d.Message)
	}
	if d := pullFrom(t, b, "default"); d.Message.Type != queue.MsgResume || d.Message.WaitID != "w1" {
		t.Fatalf("second moved = %+v", d.Message)
	}
	if d := pullFrom(t, b, "default"); d.DecodeErr == nil || d.TaskID != "c3" {
		t.Fatalf("third moved = %+v, want the corrupt body of c3", d)
	}
	if orphaned, err := b.client.OrphanedWorkers(b.ctx); err != nil || len(orphaned) != 0 {
		t.Fatalf("OrphanedWorkers after the move = %v, %v", orphaned, err)
	}
	if n, err := b.client.MoveWorkerMessages(b.ctx, "w-gone", toDefault); err != nil || n != 0 {
		t.Fatalf("second move = %d, %v; want nothing", n, err)
	}
	if lag, err := b.client.WorkerLag(b.ctx, "w-live"); err != nil || lag.Pending+uint64(lag.AckPending) != 1 {
		t.Fatalf("the live worker's lag = %+v, %v; want its message kept", lag, err)
	}
}

// A nak or a term with a context that has no deadline (a worker settling
// after its own context ended uses context.Background()) still reaches the
// server and returns nil: nats.go refuses to flush without a deadline,
// which once made every nak and term log "context requires a deadline".
func TestNakAndTermNeedNoDeadline(t *testing.T) {
	b := setup(t, queue.Config{})
	p, err := b.client.NewPuller(b.ctx, queue.PullerConfig{Queues: []string{"default"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"naked", "termed"} {
		if _, err := b.client.Enqueue(b.ctx, "default", startMsg(id), ""); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		d := pull(t, p)
		if d.Message.TaskID == "naked" {
			err = d.Nak(context.Background(), time.Hour)
		} else {
			err = d.Term(context.Background(), "poison")
		}
		if err != nil {
			t.Fatalf("settling %s without a deadline: %v", d.Message.TaskID, err)
		}
	}
	m := b.client.Metrics()
	if m.Naked.Load() != 1 || m.Termed.Load() != 1 {
		t.Fatalf("naked %d, termed %d; want 1 each", m.Naked.Load(), m.Termed.Load())
	}
}
