package taskops_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// TestFirstPassWakesAtFirstSuccess: a parent waiting with FirstPass on
// three children is not woken by a child that failed, is woken by the
// first that succeeded while the third still runs; a plain wait on the
// same children would still be waiting.
func TestFirstPassWakesAtFirstSuccess(t *testing.T) {
	st, q := fleettest.SQLiteStore(t), openQueue(t)
	c, e := newCompleter(st, q)
	ctx := context.Background()
	parent := createTask(t, st, uuid.Nil)
	claim(t, st, parent.ID)
	var kids []uuid.UUID
	for range 3 {
		k := createTask(t, st, parent.ID)
		claim(t, st, k.ID)
		kids = append(kids, k.ID)
	}
	wf, _ := json.Marshal(fleet.WaitingFor{WaitID: "1", Children: kids, FirstPass: true})
	if _, err := st.TransitionTask(ctx, store.TransitionTaskParams{ID: parent.ID, From: store.TaskRunning,
		To: store.TaskWaiting, WorkerID: "w1", WaitingFor: wf}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.End(ctx, taskops.Failed(kids[0], "w1", fleet.ReasonChecksFailed, fleet.TaskResult{})); err != nil {
		t.Fatal(err)
	}
	if e.resumed != 0 {
		t.Fatalf("a failed attempt woke the parent")
	}
	if _, err := c.End(ctx, taskops.Succeeded(kids[1], "w1", fleet.TaskResult{Success: true})); err != nil {
		t.Fatal(err)
	}
	d := pullOne(t, q)
	if d.Message.Type != queue.MsgResume || d.Message.TaskID != parent.ID.String() || d.Message.ChildTaskID != kids[1].String() {
		t.Fatalf("message %+v; want the resume of the parent by the child that passed", d.Message)
	}
	if e.resumed != 1 {
		t.Errorf("%d resumes, want 1", e.resumed)
	}
}
