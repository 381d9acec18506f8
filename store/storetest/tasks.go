package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

var taskTests = map[string]func(*testing.T, *bundle){
	"CreateAndGet": func(t *testing.T, b *bundle) {
		spec := json.RawMessage(`{"prompt": "bump x", "limits": {"turns": 5}}`)
		res, err := b.s.CreateTask(b.ctx, store.CreateTaskParams{Spec: spec, Priority: 7,
			Labels: map[string]string{"team": "payments", "batch": "b1"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Existing {
			t.Fatal("a new task reported Existing")
		}
		got := b.get(t, res.Task.ID)
		if got.State != store.TaskQueued || got.Queue != store.DefaultQueue || got.Priority != 7 ||
			got.Depth != 0 || got.RootID != got.ID || got.ParentID != uuid.Nil || got.Attempts != 0 {
			t.Fatalf("unexpected new task: %+v", got)
		}
		jsonEqual(t, "Spec", got.Spec, spec)
		if got.Labels["team"] != "payments" || got.Labels["batch"] != "b1" || len(got.Labels) != 2 {
			t.Fatalf("labels = %v", got.Labels)
		}
		recent(t, "CreatedAt", got.CreatedAt)
		if !got.StartedAt.IsZero() || !got.FinishedAt.IsZero() || !got.HeartbeatAt.IsZero() || got.Result != nil || got.WaitingFor != nil {
			t.Fatalf("a queued task has run fields set: %+v", got)
		}
		if !got.CreatedAt.Equal(res.Task.CreatedAt) {
			t.Fatalf("CreatedAt changed between create (%v) and get (%v)", res.Task.CreatedAt, got.CreatedAt)
		}
	},
	"ChosenID": func(t *testing.T, b *bundle) {
		id := uuid.New()
		if got := b.task(t, store.CreateTaskParams{ID: id, Queue: "gpu"}); got.ID != id || got.Queue != "gpu" {
			t.Fatalf("got %s in %s, want %s in gpu", got.ID, got.Queue, id)
		}
		_, err := b.s.CreateTask(b.ctx, store.CreateTaskParams{ID: id, Spec: json.RawMessage(`{}`)})
		wantErr(t, err, store.ErrConflict)
	},
	"IdempotentCreate": func(t *testing.T, b *bundle) {
		first := b.task(t, store.CreateTaskParams{IdempotencyKey: "k1", Spec: json.RawMessage(`{"n":1}`)})
		res, err := b.s.CreateTask(b.ctx, store.CreateTaskParams{IdempotencyKey: "k1", Spec: json.RawMessage(`{"n":2}`)})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Existing || res.Task.ID != first.ID {
			t.Fatalf("second create with the same key: existing=%v id=%s, want the first task %s", res.Existing, res.Task.ID, first.ID)
		}
		jsonEqual(t, "Spec", res.Task.Spec, json.RawMessage(`{"n":1}`))
		counts, err := b.s.CountTasks(b.ctx, store.CountTasksParams{})
		if err != nil {
			t.Fatal(err)
		}
		if counts[store.TaskQueued] != 1 {
			t.Fatalf("counts = %v, want one queued task", counts)
		}
	},
	"BatchCreate": func(t *testing.T, b *bundle) {
		old := b.task(t, store.CreateTaskParams{IdempotencyKey: "old"})
		spec := json.RawMessage(`{}`)
		res, err := b.s.CreateTasks(b.ctx, store.CreateTasksParams{Tasks: []store.CreateTaskParams{
			{Spec: spec, IdempotencyKey: "a"}, {Spec: spec, IdempotencyKey: "old"}, {Spec: spec, IdempotencyKey: "a"}, {Spec: spec},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 4 || res[0].Existing || !res[1].Existing || res[1].Task.ID != old.ID ||
			!res[2].Existing || res[2].Task.ID != res[0].Task.ID || res[3].Existing {
			t.Fatalf("batch results: %+v", res)
		}
		// A batch with one bad task creates nothing.
		_, err = b.s.CreateTasks(b.ctx, store.CreateTasksParams{Tasks: []store.CreateTaskParams{
			{Spec: spec, IdempotencyKey: "fresh"}, {Spec: spec, ParentID: uuid.New()},
		}})
		wantErr(t, err, store.ErrNotFound)
		page, err := b.s.ListTasks(b.ctx, store.ListTasksParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Tasks) != 3 {
			t.Fatalf("after a failed batch there are %d tasks, want 3", len(page.Tasks))
		}
	},
	"GetUnknown": func(t *testing.T, b *bundle) {
		_, err := b.s.GetTask(b.ctx, store.GetTaskParams{ID: uuid.New()})
		wantErr(t, err, store.ErrNotFound)
	},
	"PingAndCloseTwice": func(t *testing.T, b *bundle) {
		if err := b.s.Ping(b.ctx); err != nil {
			t.Fatal(err)
		}
		if err := b.s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := b.s.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	},
}

var transitionTests = map[string]func(*testing.T, *bundle){
	"Claim": func(t *testing.T, b *bundle) {
		task := b.task(t, store.CreateTaskParams{})
		got, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: task.ID, WorkerID: "w1"})
		if err != nil {
			t.Fatal(err)
		}
		if got.State != store.TaskRunning || got.WorkerID != "w1" || got.Attempts != 1 {
			t.Fatalf("claimed task: %+v", got)
		}
		recent(t, "StartedAt", got.StartedAt)
		recent(t, "HeartbeatAt", got.HeartbeatAt)
		_, err = b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: task.ID, WorkerID: "w2"})
		wantErr(t, err, store.ErrConflict)
		if g := b.get(t, task.ID); g.WorkerID != "w1" || g.Attempts != 1 {
			t.Fatalf("a lost claim changed the task: %+v", g)
		}
		_, err = b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: uuid.New(), WorkerID: "w1"})
		wantErr(t, err, store.ErrNotFound)
	},
	"Takeover": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		_, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: task.ID, WorkerID: "w2", StaleBefore: task.HeartbeatAt.Add(-time.Hour)})
		wantErr(t, err, store.ErrConflict)
		got, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: task.ID, WorkerID: "w2", StaleBefore: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatalf("takeover of a stale task: %v", err)
		}
		if got.WorkerID != "w2" || got.Attempts != 2 || !got.StartedAt.Equal(task.StartedAt) {
			t.Fatalf("after takeover: %+v (before: %+v)", got, task)
		}
		_, err = b.s.HeartbeatTask(b.ctx, store.HeartbeatTaskParams{ID: task.ID, WorkerID: "w1"})
		wantErr(t, err, store.ErrConflict)
	},
	"Heartbeat": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		got, err := b.s.HeartbeatTask(b.ctx, store.HeartbeatTaskParams{ID: task.ID, WorkerID: "w1"})
		if err != nil {
			t.Fatal(err)
		}
		if got.Before(task.HeartbeatAt) {
			t.Fatalf("heartbeat went back: %v < %v", got, task.HeartbeatAt)
		}
		if stored := b.get(t, task.ID); !stored.HeartbeatAt.Equal(got) {
			t.Fatalf("heartbeat returned %v, stored %v", got, stored.HeartbeatAt)
		}
		_, err = b.s.HeartbeatTask(b.ctx, store.HeartbeatTaskParams{ID: task.ID, WorkerID: "w2"})
		wantErr(t, err, store.ErrConflict)
		b.move(t, task.ID, store.TaskRunning, store.TaskSucceeded)
		_, err = b.s.HeartbeatTask(b.ctx, store.HeartbeatTaskParams{ID: task.ID, WorkerID: "w1"})
		wantErr(t, err, store.ErrConflict)
		_, err = b.s.HeartbeatTask(b.ctx, store.HeartbeatTaskParams{ID: uuid.New(), WorkerID: "w1"})
		wantErr(t, err, store.ErrNotFound)
	},
	"ParkWakeFinish": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		waitFor := json.RawMessage(`{"children":["c1"]}`)
		parked, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskRunning,
			To: store.TaskWaiting, WorkerID: "w1", WaitingFor: waitFor})
		if err != nil {
			t.Fatal(err)
		}
		jsonEqual(t, "WaitingFor", parked.WaitingFor, waitFor)
		if parked.State != store.TaskWaiting || !parked.HeartbeatAt.IsZero() {
			t.Fatalf("parked: %+v", parked)
		}
		// Waiting is not claimable by default, only when asked for.
		_, err = b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: task.ID, WorkerID: "w2"})
		wantErr(t, err, store.ErrConflict)
		woken, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: task.ID, WorkerID: "w2",
			From: []store.TaskState{store.TaskQueued, store.TaskWaiting}})
		if err != nil {
			t.Fatal(err)
		}
		if woken.WaitingFor != nil || woken.Attempts != 2 || woken.WorkerID != "w2" {
			t.Fatalf("woken: %+v", woken)
		}
		result := json.RawMessage(`{"text":"done","success":true}`)
		_, err = b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskRunning,
			To: store.TaskSucceeded, WorkerID: "w1", Result: result})
		wantErr(t, err, store.ErrConflict) // w1 no longer owns it
		done, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskRunning,
			To: store.TaskSucceeded, WorkerID: "w2", Result: result})
		if err != nil {
			t.Fatal(err)
		}
		jsonEqual(t, "Result", done.Result, result)
		recent(t, "FinishedAt", done.FinishedAt)
		_, err = b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskSucceeded, To: store.TaskFailed})
		wantErr(t, err, store.ErrInvalid)
	},
	"RequeueAndWakeToQueue": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		b.move(t, task.ID, store.TaskRunning, store.TaskQueued)
		got, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: task.ID, WorkerID: "w2"})
		if err != nil || got.Attempts != 2 {
			t.Fatalf("reclaim after requeue: %+v, %v", got, err)
		}
		b.move(t, task.ID, store.TaskRunning, store.TaskWaiting)
		if q := b.move(t, task.ID, store.TaskWaiting, store.TaskQueued); q.State != store.TaskQueued {
			t.Fatalf("woken to queue: %+v", q)
		}
	},
	"FailWithReason": func(t *testing.T, b *bundle) {
		task := b.task(t, store.CreateTaskParams{})
		got, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskQueued,
			To: store.TaskFailed, Error: "dead_letter"})
		if err != nil {
			t.Fatal(err)
		}
		if got.Error != "dead_letter" || got.State != store.TaskFailed || got.FinishedAt.IsZero() {
			t.Fatalf("failed task: %+v", got)
		}
	},
	"CompareAndSetConflict": func(t *testing.T, b *bundle) {
		task := b.task(t, store.CreateTaskParams{})
		_, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskRunning, To: store.TaskSucceeded})
		wantErr(t, err, store.ErrConflict)
		if g := b.get(t, task.ID); g.State != store.TaskQueued {
			t.Fatalf("a lost compare-and-set changed the state to %s", g.State)
		}
		_, err = b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: uuid.New(), From: store.TaskQueued, To: store.TaskCancelled})
		wantErr(t, err, store.ErrNotFound)
	},
	"ForbiddenTransitions": func(t *testing.T, b *bundle) {
		task := b.task(t, store.CreateTaskParams{})
		_, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskQueued, To: store.TaskSucceeded})
		wantErr(t, err, store.ErrInvalid)
		for _, from := range store.TaskStates {
			for _, to := range store.TaskStates {
				if store.CanTransition(from, to) {
					continue
				}
				_, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: from, To: to})
				wantErr(t, err, store.ErrInvalid)
			}
		}
		_, err = b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskQueued, To: store.TaskRunning})
		wantErr(t, err, store.ErrInvalid) // running only through ClaimTask
		if g := b.get(t, task.ID); g.State != store.TaskQueued {
			t.Fatalf("a forbidden transition changed the state to %s", g.State)
		}
	},
}
