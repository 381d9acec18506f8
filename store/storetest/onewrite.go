package storetest

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// oneWriteTests check the combined writes a worker uses to save round
// trips: an append that creates its session (AppendTurnsParams.
// CreateSession) and a transition that appends first (TransitionTaskParams.
// Append).
var oneWriteTests = map[string]func(*testing.T, *bundle){
	"AppendCreatesTheSession": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		p := createAppend(task.ID, 2, "w1")
		p.AddUsage = store.Usage{InputTokens: 10, OutputTokens: 3}
		p.AddCostUSD = 0.5
		if _, err := b.s.AppendTurns(b.ctx, p); err != nil {
			t.Fatal(err)
		}
		s, err := b.s.GetSession(b.ctx, store.GetSessionParams{ID: task.ID})
		if err != nil {
			t.Fatal(err)
		}
		if s.TaskID != task.ID || s.Model != "m1" || s.Profile != "anthropic" || s.State != "idle" ||
			s.LastSeq != 2 || s.Usage.InputTokens != 10 || s.Usage.OutputTokens != 3 || s.CostUSD != 0.5 ||
			string(s.Config) != `{"k": 1}` && string(s.Config) != `{"k":1}` {
			t.Fatalf("created session = %+v", s)
		}
		gapless(t, b.load(t, s.ID), 2)
		if _, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: s.ID, Turns: turns(3, 1), OwnerWorkerID: "w1"}); err != nil {
			t.Fatalf("appending after a creating append: %v", err)
		}
	},
	"CreateOfAnExistingSessionConflicts": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		if _, err := b.s.AppendTurns(b.ctx, createAppend(task.ID, 1, "w1")); err != nil {
			t.Fatal(err)
		}
		_, err := b.s.AppendTurns(b.ctx, createAppend(task.ID, 1, "w1"))
		wantErr(t, err, store.ErrConflict)
		gapless(t, b.load(t, task.ID), 1)
	},
	"CreateIsFenced": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		_, err := b.s.AppendTurns(b.ctx, createAppend(task.ID, 1, "w2"))
		notOwner(t, err, store.TaskRunning, "w1")
		_, err = b.s.GetSession(b.ctx, store.GetSessionParams{ID: task.ID})
		wantErr(t, err, store.ErrNotFound)
	},
	"TakenOverCreateIsNotOwner": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		if _, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskRunning, To: store.TaskQueued}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: task.ID, WorkerID: "w2"}); err != nil {
			t.Fatal(err)
		}
		if _, err := b.s.AppendTurns(b.ctx, createAppend(task.ID, 1, "w2")); err != nil {
			t.Fatal(err)
		}
		_, err := b.s.AppendTurns(b.ctx, createAppend(task.ID, 1, "w1"))
		notOwner(t, err, store.TaskRunning, "w2")
	},
	"CreateForAMissingTaskIsNotFound": func(t *testing.T, b *bundle) {
		_, err := b.s.AppendTurns(b.ctx, createAppend(uuid.New(), 1, ""))
		wantErr(t, err, store.ErrNotFound)
	},
	"CreateStartsAtSeqOne": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		p := createAppend(task.ID, 1, "w1")
		p.Turns = turns(2, 1)
		_, err := b.s.AppendTurns(b.ctx, p)
		invalid(t, err, "Turns[0].Seq")
	},
	"TransitionAppendsFirst": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		a := createAppend(task.ID, 2, "w1")
		got, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskRunning,
			To: store.TaskSucceeded, WorkerID: "w1", Result: json.RawMessage(`{"ok":true}`), Append: &a})
		if err != nil {
			t.Fatal(err)
		}
		if got.State != store.TaskSucceeded || got.FinishedAt.IsZero() {
			t.Fatalf("task after the combined write: %+v", got)
		}
		gapless(t, b.load(t, task.ID), 2)
		more := store.AppendTurnsParams{SessionID: task.ID, Turns: turns(3, 1)}
		reopened := b.move(t, task.ID, store.TaskSucceeded, store.TaskQueued)
		claimed, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: reopened.ID, WorkerID: "w2"})
		if err != nil {
			t.Fatal(err)
		}
		more.OwnerWorkerID = "w2"
		if _, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: claimed.ID, From: store.TaskRunning,
			To: store.TaskFailed, WorkerID: "w2", Error: "boom", Append: &more}); err != nil {
			t.Fatalf("transition appending to an existing session: %v", err)
		}
		gapless(t, b.load(t, task.ID), 3)
	},
	"FailedAppendWritesNothing": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		s := b.session(t, task.ID)
		a := store.AppendTurnsParams{SessionID: s.ID, Turns: turns(1, 1), OwnerWorkerID: "w1"}
		if _, err := b.s.AppendTurns(b.ctx, a); err != nil {
			t.Fatal(err)
		}
		_, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskRunning,
			To: store.TaskSucceeded, WorkerID: "w1", Append: &a})
		wantErr(t, err, store.ErrConflict)
		if cur := b.get(t, task.ID); cur.State != store.TaskRunning {
			t.Fatalf("the transition happened without its append: %s", cur.State)
		}
		gapless(t, b.load(t, s.ID), 1)
	},
	"FencedAppendStopsTheTransition": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		a := createAppend(task.ID, 1, "w2")
		_, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskRunning,
			To: store.TaskSucceeded, Append: &a})
		notOwner(t, err, store.TaskRunning, "w1")
		if cur := b.get(t, task.ID); cur.State != store.TaskRunning {
			t.Fatalf("the transition happened without its append: %s", cur.State)
		}
	},
	"AppendStaysWhenTheTransitionDoesNotMatch": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		a := createAppend(task.ID, 2, "") // unfenced: written whatever the state
		_, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskQueued,
			To: store.TaskCancelled, Append: &a})
		wantErr(t, err, store.ErrConflict)
		gapless(t, b.load(t, task.ID), 2)
		if cur := b.get(t, task.ID); cur.State != store.TaskRunning {
			t.Fatalf("a transition from the wrong state happened: %s", cur.State)
		}
	},
	"AppendMustBeTheTasksSession": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		other := b.running(t, store.CreateTaskParams{}, "w1")
		a := createAppend(other.ID, 1, "w1")
		_, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskRunning,
			To: store.TaskSucceeded, WorkerID: "w1", Append: &a})
		invalid(t, err, "Append.CreateSession.TaskID")
		s := b.session(t, other.ID)
		wrong := store.AppendTurnsParams{SessionID: s.ID, Turns: turns(1, 1), OwnerWorkerID: "w1"}
		_, err = b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskRunning,
			To: store.TaskSucceeded, WorkerID: "w1", Append: &wrong})
		invalid(t, err, "Append.SessionID")
		if h := b.load(t, s.ID); len(h) != 0 || b.get(t, task.ID).State != store.TaskRunning {
			t.Fatalf("another task's session got %d turns; task state %s", len(h), b.get(t, task.ID).State)
		}
	},
}

// createAppend is an append of n turns that creates task's session (its id
// is the task's), fenced by owner when set.
func createAppend(task uuid.UUID, n int, owner string) store.AppendTurnsParams {
	return store.AppendTurnsParams{SessionID: task, Turns: turns(1, n), OwnerWorkerID: owner,
		CreateSession: &store.CreateSessionParams{TaskID: task, Profile: "anthropic", Provider: "anthropic",
			Model: "m1", Config: json.RawMessage(`{"k":1}`)}}
}
