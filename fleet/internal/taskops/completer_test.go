package taskops_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// ends counts the ends and resumes a completer reports.
type ends struct {
	mu      sync.Mutex
	byState map[store.TaskState]int
	resumed int
}

func newCompleter(st store.Store, q *queue.Client) (*taskops.Completer, *ends) {
	e := &ends{byState: map[store.TaskState]int{}}
	c := &taskops.Completer{Store: st, Queue: q,
		Ended:   func(s store.TaskState) { e.mu.Lock(); e.byState[s]++; e.mu.Unlock() },
		Resumed: func() { e.mu.Lock(); e.resumed++; e.mu.Unlock() }}
	return c, e
}

func (e *ends) count(s store.TaskState) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.byState[s]
}

// park moves a running task (claimed by w1) to waiting for children.
func park(t *testing.T, st store.Store, id uuid.UUID, children ...uuid.UUID) {
	t.Helper()
	wf, _ := json.Marshal(fleet.WaitingFor{WaitID: "1", Children: children})
	if _, err := st.TransitionTask(context.Background(), store.TransitionTaskParams{ID: id, From: store.TaskRunning,
		To: store.TaskWaiting, WorkerID: "w1", WaitingFor: wf}); err != nil {
		t.Fatal(err)
	}
}

// pullOne takes (and acks) the next message for worker w1 (its own subject or the
// default queue) within the test's wait.
func pullOne(t *testing.T, q *queue.Client) *queue.Delivery {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	p, err := q.NewPuller(ctx, queue.PullerConfig{Queues: []string{"default"}, WorkerID: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := p.Pull(ctx)
	if err != nil {
		t.Fatalf("no message came: %v", err)
	}
	if err := d.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestDeadLetteredChildWakesItsParent: the dead-letter rule ends a task
// through the completer, so a parent parked on the child is resumed, on
// the worker that holds its files. (It used to mark the child failed and
// stop there: the parent waited for ever.)
func TestDeadLetteredChildWakesItsParent(t *testing.T) {
	st, q := fleettest.SQLiteStore(t), openQueue(t)
	c, e := newCompleter(st, q)
	ctx := context.Background()
	parent := createTask(t, st, uuid.Nil)
	claim(t, st, parent.ID)
	child := createTask(t, st, parent.ID)
	claim(t, st, child.ID)
	park(t, st, parent.ID, child.ID)

	h := taskops.HandleDeadLetter(c, nil)
	dl := queue.DeadLetter{TaskID: child.ID.String(), Reason: queue.DeadMaxDeliveries, Deliveries: 5}
	for range 2 { // at least once: the second changes nothing
		if err := h(ctx, dl); err != nil {
			t.Fatal(err)
		}
	}
	d := pullOne(t, q)
	if d.Message.Type != queue.MsgResume || d.Message.TaskID != parent.ID.String() || d.Message.ChildTaskID != child.ID.String() {
		t.Fatalf("message %+v; want the resume of parent %s by child %s", d.Message, parent.ID, child.ID)
	}
	if d.Subject != q.Subjects().Worker("w1") {
		t.Errorf("resume went to %s; want the parent's worker subject %s", d.Subject, q.Subjects().Worker("w1"))
	}
	if e.count(store.TaskFailed) != 1 || e.resumed != 1 {
		t.Errorf("counted %d failed ends and %d resumes; want exactly one of each", e.count(store.TaskFailed), e.resumed)
	}
}

// TestCancelledChildWakesItsParent: cancelling one child of a waiting
// parent (the API, a budget) resumes the parent, which learns the child
// ended.
func TestCancelledChildWakesItsParent(t *testing.T) {
	st, q := fleettest.SQLiteStore(t), openQueue(t)
	c, e := newCompleter(st, q)
	parent := createTask(t, st, uuid.Nil)
	claim(t, st, parent.ID)
	child := createTask(t, st, parent.ID)
	park(t, st, parent.ID, child.ID)
	res, err := c.CancelTree(context.Background(), child.ID, "user asked")
	if err != nil || len(res.Tasks) != 1 {
		t.Fatalf("cancel: %+v, %v; want one task cancelled", res, err)
	}
	if d := pullOne(t, q); d.Message.Type != queue.MsgResume || d.Message.TaskID != parent.ID.String() {
		t.Fatalf("message %+v; want the resume of parent %s", d.Message, parent.ID)
	}
	if e.count(store.TaskCancelled) != 1 {
		t.Errorf("counted %d cancelled ends, want 1", e.count(store.TaskCancelled))
	}
}

// TestEndCountsEachEndOnce: an end is counted by whoever wrote it. A run
// that finishes a task cancelled meanwhile, or taken over by another
// worker, counts nothing; ending twice counts once.
func TestEndCountsEachEndOnce(t *testing.T) {
	st, q := fleettest.SQLiteStore(t), openQueue(t)
	c, e := newCompleter(st, q)
	ctx := context.Background()

	cancelled := createTask(t, st, uuid.Nil)
	claim(t, st, cancelled.ID)
	if _, err := c.CancelTree(ctx, cancelled.ID, "stop"); err != nil {
		t.Fatal(err)
	}
	ended, err := c.End(ctx, taskops.Succeeded(cancelled.ID, "w1", fleet.TaskResult{Success: true}))
	if err != nil || ended.Moved || ended.Task.State != store.TaskCancelled {
		t.Fatalf("finishing a cancelled run: %+v, %v; want no move, the task cancelled", ended, err)
	}

	takenOver := createTask(t, st, uuid.Nil)
	claim(t, st, takenOver.ID)
	if _, err := st.ClaimTask(ctx, store.ClaimTaskParams{ID: takenOver.ID, WorkerID: "w2",
		StaleBefore: farFuture}); err != nil {
		t.Fatal(err)
	}
	ended, err = c.End(ctx, taskops.Failed(takenOver.ID, "w1", fleet.ReasonModelError, fleet.TaskResult{}))
	if err != nil || ended.Moved || ended.Task.State != store.TaskRunning {
		t.Fatalf("failing a run taken over: %+v, %v; want no move, the task running on w2", ended, err)
	}

	done := createTask(t, st, uuid.Nil)
	claim(t, st, done.ID)
	for range 2 {
		if _, err := c.End(ctx, taskops.Succeeded(done.ID, "w1", fleet.TaskResult{Success: true})); err != nil {
			t.Fatal(err)
		}
	}
	if got := [3]int{e.count(store.TaskCancelled), e.count(store.TaskFailed), e.count(store.TaskSucceeded)}; got != [3]int{1, 0, 1} {
		t.Errorf("counted cancelled, failed, succeeded = %v; want [1 0 1]", got)
	}
}

// farFuture makes every heartbeat stale, so a claim takes a running task over.
var farFuture = time.Now().Add(24 * time.Hour)
