package storetest

import (
	"encoding/json"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// reopenTests check that an ended task can be reopened (new input for it)
// but a cancelled one cannot.
var reopenTests = map[string]func(*testing.T, *bundle){
	"SucceededRunsAgain": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		first := json.RawMessage(`{"final_text":"first","success":true}`)
		ended, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskRunning,
			To: store.TaskSucceeded, WorkerID: "w1", Result: first})
		if err != nil {
			t.Fatal(err)
		}
		got := b.move(t, task.ID, store.TaskSucceeded, store.TaskQueued)
		if got.State != store.TaskQueued || !got.FinishedAt.IsZero() || !got.HeartbeatAt.IsZero() ||
			got.WaitingFor != nil || got.Result != nil || got.Error != "" {
			t.Fatalf("reopened task: %+v", got)
		}
		if got.Attempts != 1 || !got.StartedAt.Equal(ended.StartedAt) || got.WorkerID != "w1" {
			t.Fatalf("a reopen changed the run record: %+v (before: %+v)", got, ended)
		}
		again, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: task.ID, WorkerID: "w2"})
		if err != nil {
			t.Fatalf("claiming a reopened task: %v", err)
		}
		if again.Attempts != 2 || again.WorkerID != "w2" || !again.StartedAt.Equal(ended.StartedAt) {
			t.Fatalf("claimed again: %+v", again)
		}
		second := json.RawMessage(`{"final_text":"second","success":true}`)
		done, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskRunning,
			To: store.TaskSucceeded, WorkerID: "w2", Result: second})
		if err != nil {
			t.Fatal(err)
		}
		jsonEqual(t, "Result", done.Result, second)
		recent(t, "FinishedAt", done.FinishedAt)
	},
	"FailedRunsAgainWithoutItsOldError": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		_, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskRunning,
			To: store.TaskFailed, WorkerID: "w1", Result: json.RawMessage(`{"success":false}`), Error: "turn_limit"})
		if err != nil {
			t.Fatal(err)
		}
		if got := b.move(t, task.ID, store.TaskFailed, store.TaskQueued); got.Error != "" || got.Result != nil {
			t.Fatalf("reopened failed task kept its outcome: %+v", got)
		}
		b.claim(t, task.ID, "w1")
		done := b.move(t, task.ID, store.TaskRunning, store.TaskSucceeded)
		if done.Error != "" || done.Attempts != 2 {
			t.Fatalf("a success after a reopened failure: %+v", done)
		}
	},
	"CancelledStaysCancelled": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		b.move(t, task.ID, store.TaskRunning, store.TaskCancelled)
		_, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskCancelled, To: store.TaskQueued})
		wantErr(t, err, store.ErrInvalid)
		if got := b.get(t, task.ID); got.State != store.TaskCancelled || got.FinishedAt.IsZero() {
			t.Fatalf("a refused reopen changed the task: %+v", got)
		}
	},
	"ReopenIsCompareAndSet": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		b.move(t, task.ID, store.TaskRunning, store.TaskSucceeded)
		// Two senders read it succeeded at once: exactly one reopens it.
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskSucceeded, To: store.TaskQueued})
			})
		}
		wg.Wait()
		won := 0
		for _, err := range errs {
			if err == nil {
				won++
			} else {
				wantErr(t, err, store.ErrConflict)
			}
		}
		if won != 1 {
			t.Fatalf("%d reopens won, want 1: %v", won, errs)
		}
		// The loser's reopen from failed does not apply either.
		_, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskFailed, To: store.TaskQueued})
		wantErr(t, err, store.ErrConflict)
	},
}

// claim claims a queued task for worker.
func (b *bundle) claim(t *testing.T, id uuid.UUID, worker string) store.Task {
	t.Helper()
	got, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: id, WorkerID: worker})
	if err != nil {
		t.Fatalf("ClaimTask: %v", err)
	}
	return got
}
