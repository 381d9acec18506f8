package taskops_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
	"github.com/agentfleet/agentfleet/store"
)

const testWait = 30 * time.Second

func openQueue(t *testing.T) *queue.Client {
	t.Helper()
	ns := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	q, err := queue.Open(ctx, ns.Connect(t), queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// createTask stores a task (a child of parent unless it is uuid.Nil).
func createTask(t *testing.T, st store.Store, parent uuid.UUID) store.Task {
	t.Helper()
	spec, _ := json.Marshal(fleet.TaskSpec{Prompt: "p", Profile: "openai", ParentID: parent})
	res, err := st.CreateTask(context.Background(), store.CreateTaskParams{ParentID: parent, Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	return res.Task
}

func claim(t *testing.T, st store.Store, id uuid.UUID) {
	t.Helper()
	if _, err := st.ClaimTask(context.Background(), store.ClaimTaskParams{ID: id, WorkerID: "w1"}); err != nil {
		t.Fatal(err)
	}
}

func TestHandleDeadLetter(t *testing.T) {
	st := fleettest.SQLiteStore(t)
	ctx := context.Background()
	var failed int
	h := taskops.HandleDeadLetter(&taskops.Completer{Store: st, Queue: openQueue(t)}, func() { failed++ })
	tests := []struct {
		name       string
		dl         queue.DeadLetter
		wantDetail string
	}{
		{"max deliveries", queue.DeadLetter{Reason: queue.DeadMaxDeliveries, Deliveries: 5},
			"dead letter: max_deliveries after 5 deliveries"},
		{"terminated", queue.DeadLetter{Reason: queue.DeadTerminated, Deliveries: 1, TermReason: "bad_spec: not JSON"},
			"dead letter: terminated after 1 deliveries: bad_spec: not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			task := createTask(t, st, uuid.Nil)
			tt.dl.TaskID = task.ID.String()
			for range 2 { // handled at least once: the second is a no-op
				if err := h(ctx, tt.dl); err != nil {
					t.Fatal(err)
				}
			}
			got, err := st.GetTask(ctx, store.GetTaskParams{ID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			res, _ := fleet.DecodeResult(got.Result)
			if got.State != store.TaskFailed || got.Error != fleet.ReasonDeadLetter || res.Error != tt.wantDetail {
				t.Fatalf("after a dead letter: %s %q, result error %q; want failed %q, %q",
					got.State, got.Error, res.Error, fleet.ReasonDeadLetter, tt.wantDetail)
			}
		})
	}
	if failed != len(tests) {
		t.Errorf("failed callback ran %d times, want once per task (%d)", failed, len(tests))
	}
	if err := h(ctx, queue.DeadLetter{Reason: queue.DeadTerminated, TaskID: uuid.NewString()}); err != nil {
		t.Errorf("dead letter of an unknown task: %v, want it dropped", err)
	}
	if err := h(ctx, queue.DeadLetter{Reason: queue.DeadTerminated, TaskID: "not-a-uuid"}); err != nil {
		t.Errorf("dead letter without a task id: %v, want it dropped", err)
	}
}

func TestEndAnyStateLeavesFinalTasks(t *testing.T) {
	st := fleettest.SQLiteStore(t)
	c := &taskops.Completer{Store: st, Queue: openQueue(t)}
	ctx := context.Background()
	task := createTask(t, st, uuid.Nil)
	claim(t, st, task.ID)
	ended, err := c.End(ctx, taskops.FailedAnyState(task.ID, "r1", "first"))
	if err != nil || !ended.Moved {
		t.Fatalf("first fail: moved %v, %v; want it moved", ended.Moved, err)
	}
	ended, err = c.End(ctx, taskops.FailedAnyState(task.ID, "r2", "second"))
	if err != nil || ended.Moved {
		t.Fatalf("second fail: moved %v, %v; want a no-op", ended.Moved, err)
	}
	got, _ := st.GetTask(ctx, store.GetTaskParams{ID: task.ID})
	if got.Error != "r1" {
		t.Errorf("error %q, want the first reason r1 kept", got.Error)
	}
	if _, err := c.End(ctx, taskops.FailedAnyState(uuid.New(), "r", "d")); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown task: %v, want store.ErrNotFound", err)
	}
}

// TestCancelTreeAbortsEveryRunningTask: a session that does not answer its
// abort costs at most the abort timeout and does not keep the other
// running tasks of the tree from being aborted. (The spawner's own copy of
// the cancel returned at the first failed abort, without a timeout.)
func TestCancelTreeAbortsEveryRunningTask(t *testing.T) {
	st, q := fleettest.SQLiteStore(t), openQueue(t)
	ctx := context.Background()
	root := createTask(t, st, uuid.Nil)
	stuck := createTask(t, st, root.ID)
	healthy := createTask(t, st, root.ID)
	queued := createTask(t, st, root.ID)
	for _, id := range []uuid.UUID{root.ID, stuck.ID, healthy.ID} {
		claim(t, st, id)
	}
	release := make(chan struct{})
	defer close(release)
	serve(t, q, stuck.ID, func() { <-release })
	aborted := make(chan struct{}, 2)
	serve(t, q, healthy.ID, func() { aborted <- struct{}{} })
	serve(t, q, root.ID, func() { aborted <- struct{}{} })

	c := &taskops.Completer{Store: st, Queue: q, AbortTimeout: 300 * time.Millisecond}
	res, err := c.CancelTree(ctx, root.ID, "stop")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tasks) != 4 || res.Aborted != 2 {
		t.Fatalf("cancelled %d tasks, aborted %d; want 4 cancelled, 2 aborted (root and the healthy child)", len(res.Tasks), res.Aborted)
	}
	if res.AbortErr == nil || !strings.Contains(res.AbortErr.Error(), stuck.ID.String()) {
		t.Errorf("AbortErr %v, want it to name the stuck task %s", res.AbortErr, stuck.ID)
	}
	for range 2 {
		select {
		case <-aborted:
		case <-time.After(testWait):
			t.Fatal("a running task's session got no abort")
		}
	}
	got, _ := st.GetTask(ctx, store.GetTaskParams{ID: queued.ID})
	if got.State != store.TaskCancelled {
		t.Errorf("queued child is %s, want cancelled", got.State)
	}
}

// serve answers control requests of task id's session, running onAbort
// before answering an abort.
func serve(t *testing.T, q *queue.Client, id uuid.UUID, onAbort func()) {
	t.Helper()
	stop, err := q.ServeControl(fleet.DefaultTenant, fleet.SessionSubject(id), func(_ context.Context, req queue.ControlRequest) queue.ControlReply {
		if req.Op == queue.OpAbort {
			onAbort()
		}
		return queue.ControlReply{OK: true}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = stop() })
}
