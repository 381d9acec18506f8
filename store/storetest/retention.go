package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// history gives task a session with n turns and one tool output, and an
// artifact of kind "diff"; it returns the session.
func (b *bundle) history(t *testing.T, task uuid.UUID, n int) store.Session {
	t.Helper()
	s := b.session(t, task)
	turns := make([]store.NewTurn, n)
	for i := range turns {
		turns[i] = store.NewTurn{Seq: int64(i + 1), Kind: "user", Payload: json.RawMessage(`{"text":"hi"}`)}
	}
	if _, err := b.s.AppendTurns(b.ctx, store.AppendTurnsParams{SessionID: s.ID, Turns: turns}); err != nil {
		t.Fatalf("AppendTurns: %v", err)
	}
	if _, err := b.s.PutToolOutput(b.ctx, store.PutToolOutputParams{SessionID: s.ID, CallID: "c1", Tool: "bash", Output: "ok"}); err != nil {
		t.Fatalf("PutToolOutput: %v", err)
	}
	if _, err := b.s.PutArtifact(b.ctx, store.PutArtifactParams{TaskID: task, Kind: "diff", Content: []byte("d")}); err != nil {
		t.Fatalf("PutArtifact: %v", err)
	}
	return s
}

func (b *bundle) turnCount(t *testing.T, s uuid.UUID) int {
	t.Helper()
	turns, err := b.s.LoadTurns(b.ctx, store.LoadTurnsParams{SessionID: s})
	if err != nil {
		t.Fatalf("LoadTurns: %v", err)
	}
	return len(turns)
}

func (b *bundle) sweep(t *testing.T, sw store.Sweeper, p store.SweepParams) int64 {
	t.Helper()
	n, err := sw.Sweep(b.ctx, p)
	if err != nil {
		t.Fatalf("Sweep %+v: %v", p, err)
	}
	return n
}

var retentionTests = map[string]func(*testing.T, *bundle){
	// An ended tree's history goes in bounded batches; a live tree's stays
	// whatever its age, as does the newest artifact of a kind and name,
	// and the tenants not selected keep theirs.
	"SweepEndedKeepsLiveTree": func(t *testing.T, b *bundle) {
		sw, ok := b.s.(store.Sweeper)
		if !ok {
			t.Fatalf("%T does not implement store.Sweeper", b.s)
		}
		ended := b.running(t, store.CreateTaskParams{Tenant: "ret"}, "w1")
		endedSess := b.history(t, ended.ID, 3)
		b.move(t, ended.ID, store.TaskRunning, store.TaskFailed)
		other := b.running(t, store.CreateTaskParams{Tenant: "keep"}, "w1")
		otherSess := b.history(t, other.ID, 2)
		b.move(t, other.ID, store.TaskRunning, store.TaskSucceeded)
		live := b.running(t, store.CreateTaskParams{Tenant: "ret"}, "w1")
		child := b.running(t, store.CreateTaskParams{ParentID: live.ID}, "w2")
		childSess := b.history(t, child.ID, 2)
		b.move(t, child.ID, store.TaskRunning, store.TaskFailed)

		if n := b.sweep(t, sw, store.SweepParams{Kind: store.RetainTurns, EndedBefore: time.Now().Add(-time.Hour)}); n != 0 {
			t.Fatalf("a window not yet passed deleted %d turns, want 0", n)
		}
		later := time.Now().Add(time.Hour)
		p := store.SweepParams{Kind: store.RetainTurns, EndedBefore: later, ExceptTenants: []string{"keep"}, Limit: 2}
		if n := b.sweep(t, sw, p); n != 2 {
			t.Fatalf("first batch deleted %d turns, want the limit 2", n)
		}
		if n := b.sweep(t, sw, p); n != 1 {
			t.Fatalf("second batch deleted %d turns, want the 1 left", n)
		}
		if n := b.sweep(t, sw, p); n != 0 {
			t.Fatalf("third batch deleted %d turns, want 0", n)
		}
		if got := b.turnCount(t, endedSess.ID); got != 0 {
			t.Fatalf("ended task kept %d turns, want 0", got)
		}
		if got := b.turnCount(t, childSess.ID); got != 2 {
			t.Fatalf("the ended child of a live tree has %d turns, want its 2 kept", got)
		}
		if got := b.turnCount(t, otherSess.ID); got != 2 {
			t.Fatalf("the excepted tenant has %d turns, want its 2 kept", got)
		}
		for _, k := range []store.RetentionKind{store.RetainToolOutputs, store.RetainArtifacts} {
			if n := b.sweep(t, sw, store.SweepParams{Kind: k, EndedBefore: later, Tenants: []string{"ret"}}); n != 1 {
				t.Fatalf("sweeping %s of tenant ret deleted %d rows, want 1 (the ended task's)", k, n)
			}
		}
		_, err := b.s.GetToolOutput(b.ctx, store.GetToolOutputParams{SessionID: endedSess.ID, CallID: "c1"})
		wantErr(t, err, store.ErrNotFound)
		if _, err := b.s.GetToolOutput(b.ctx, store.GetToolOutputParams{SessionID: childSess.ID, CallID: "c1"}); err != nil {
			t.Fatalf("the live tree's tool output: %v", err)
		}
		_, err = b.s.GetArtifact(b.ctx, store.GetArtifactParams{TaskID: ended.ID, Kind: "diff"})
		wantErr(t, err, store.ErrNotFound)
		// The live tree ends: its history goes too, but the newest diff
		// (the child's, LatestArtifact's answer) stays.
		b.move(t, live.ID, store.TaskRunning, store.TaskSucceeded)
		if n := b.sweep(t, sw, store.SweepParams{Kind: store.RetainTurns, EndedBefore: later, Tenants: []string{"ret"}}); n != 2 {
			t.Fatalf("after the tree ended: %d turns deleted, want 2", n)
		}
		if n := b.sweep(t, sw, store.SweepParams{Kind: store.RetainArtifacts, EndedBefore: later}); n != 1 {
			t.Fatalf("artifacts deleted %d, want 1 (the other tenant's older diff; the newest stays)", n)
		}
		if _, err := b.s.LatestArtifact(b.ctx, store.LatestArtifactParams{Kind: "diff"}); err != nil {
			t.Fatalf("the newest diff went: %v", err)
		}
		if _, err := b.s.GetSession(b.ctx, store.GetSessionParams{ID: endedSess.ID}); err != nil {
			t.Fatalf("a swept task's session (its usage) must stay: %v", err)
		}
	},
	"SweepBadInput": func(t *testing.T, b *bundle) {
		sw, ok := b.s.(store.Sweeper)
		if !ok {
			t.Fatalf("%T does not implement store.Sweeper", b.s)
		}
		_, err := sw.Sweep(b.ctx, store.SweepParams{Kind: "logs", EndedBefore: time.Now()})
		wantErr(t, err, store.ErrInvalid)
		_, err = sw.Sweep(b.ctx, store.SweepParams{Kind: store.RetainTurns})
		wantErr(t, err, store.ErrInvalid)
	},
}
