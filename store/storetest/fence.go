package storetest

import (
	"errors"
	"testing"

	"github.com/agentfleet/agentfleet/store"
)

// fenceTests check AppendTurns with OwnerWorkerID: turns are written only
// while the session's task runs on that worker.
var fenceTests = map[string]func(*testing.T, *bundle){
	"OwnerAppends": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		s := b.session(t, task.ID)
		if _, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: s.ID, Turns: turns(1, 2), OwnerWorkerID: "w1"}); err != nil {
			t.Fatal(err)
		}
		gapless(t, b.load(t, s.ID), 2)
	},
	"OtherWorkerIsRefused": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		s := b.session(t, task.ID)
		_, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: s.ID, Turns: turns(1, 1), OwnerWorkerID: "w2"})
		notOwner(t, err, store.TaskRunning, "w1")
		if h := b.load(t, s.ID); len(h) != 0 {
			t.Fatalf("a refused append wrote %d turns", len(h))
		}
		if got, _ := b.s.GetSession(b.ctx, store.GetSessionParams{ID: s.ID}); got.LastSeq != 0 {
			t.Fatalf("a refused append moved last_seq to %d", got.LastSeq)
		}
	},
	"CancelledTaskIsRefused": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		s := b.session(t, task.ID)
		if _, err := b.s.CancelSubtree(b.ctx, store.CancelSubtreeParams{ID: task.ID}); err != nil {
			t.Fatal(err)
		}
		_, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: s.ID, Turns: turns(1, 1), OwnerWorkerID: "w1"})
		notOwner(t, err, store.TaskCancelled, "w1")
	},
	"SeqConflictStaysASeqConflict": func(t *testing.T, b *bundle) {
		task := b.running(t, store.CreateTaskParams{}, "w1")
		s := b.session(t, task.ID)
		p := store.AppendTurnsParams{SessionID: s.ID, Turns: turns(1, 1), OwnerWorkerID: "w1"}
		if _, err := b.s.AppendTurns(b.ctx, p); err != nil {
			t.Fatal(err)
		}
		_, err := b.s.AppendTurns(b.ctx, p)
		var no *store.NotOwnerError
		if !errors.Is(err, store.ErrConflict) || errors.As(err, &no) {
			t.Fatalf("repeated seq by the owner: %v, want a plain ErrConflict", err)
		}
	},
}

func notOwner(t *testing.T, err error, state store.TaskState, worker string) {
	t.Helper()
	var no *store.NotOwnerError
	if !errors.Is(err, store.ErrConflict) || !errors.As(err, &no) || no.State != state || no.WorkerID != worker {
		t.Fatalf("got %v, want a *NotOwnerError for a task %s on %s", err, state, worker)
	}
}
