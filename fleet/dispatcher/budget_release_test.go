package dispatcher_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/budget"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// TestBudgetReleaseKeepsAPinnedChildOnItsWorker: a child working in its
// parent's unshared local workspace, held by a budget, is released to the
// worker that holds those files. (The release used to publish it to the
// shared queue, where another worker ran it in an empty directory.)
func TestBudgetReleaseKeepsAPinnedChildOnItsWorker(t *testing.T) {
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true, SQLite: true})
	d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	labels := map[string]string{"team": "p"}
	create := func(parent uuid.UUID) store.Task {
		spec, _ := json.Marshal(fleet.TaskSpec{Prompt: "p", Profile: "openai", ParentID: parent, Labels: labels})
		res, err := f.Store.CreateTask(ctx, store.CreateTaskParams{ParentID: parent, Spec: spec, Labels: labels})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Store.ClaimTask(ctx, store.ClaimTaskParams{ID: res.Task.ID, WorkerID: "w-a"}); err != nil {
			t.Fatal(err)
		}
		return res.Task
	}
	parent := create(uuid.Nil)
	child := create(parent.ID)
	if err := budget.HoldTask(ctx, f.Store, child.ID, "w-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.PutBudget(ctx, "", "team=p", api.BudgetRequest{LimitUSD: 10}); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteBudget(ctx, "", "team=p"); err != nil { // releases what the budget held
		t.Fatal(err)
	}
	p, err := f.Queue.NewPuller(ctx, queue.PullerConfig{Queues: []string{"default"}, WorkerID: "w-a"})
	if err != nil {
		t.Fatal(err)
	}
	pullCtx, cancel := context.WithTimeout(ctx, fleettest.Wait)
	defer cancel()
	msg, err := p.Pull(pullCtx)
	if err != nil {
		t.Fatalf("the release published nothing: %v", err)
	}
	if err := msg.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	if msg.Message.TaskID != child.ID.String() || msg.Subject != f.Queue.Subjects().Worker("w-a") {
		t.Fatalf("released task %s on %s; want %s on the parent's worker subject %s",
			msg.Message.TaskID, msg.Subject, child.ID, f.Queue.Subjects().Worker("w-a"))
	}
}
