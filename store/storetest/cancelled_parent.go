package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/store"
)

// cancelledParentTests check that a task under a cancelled parent never
// starts, also when it was created after the cancel.
var cancelledParentTests = map[string]func(*testing.T, *bundle){
	"ChildOfCancelledParentIsNotClaimed": func(t *testing.T, b *bundle) {
		f := b.family(t)
		if _, err := b.s.CancelSubtree(b.ctx, store.CancelSubtreeParams{ID: f.root.ID, Reason: "user asked"}); err != nil {
			t.Fatal(err)
		}
		// A child its still-running session spawned after the cancel.
		late := b.task(t, store.CreateTaskParams{ParentID: f.root.ID})
		_, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: late.ID, WorkerID: "w2"})
		wantErr(t, err, store.ErrConflict)
		if !strings.Contains(err.Error(), "parent "+f.root.ID.String()+" is cancelled") {
			t.Fatalf("claim error %q does not name the cancelled parent", err)
		}
		_, err = b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: late.ID, WorkerID: "w2",
			From: []store.TaskState{store.TaskQueued, store.TaskWaiting}})
		wantErr(t, err, store.ErrConflict)
		if got := b.get(t, late.ID); got.State != store.TaskQueued || !got.StartedAt.IsZero() || got.Attempts != 0 {
			t.Fatalf("late child after refused claims: %+v", got)
		}
		// The refused child may still be cancelled.
		b.move(t, late.ID, store.TaskQueued, store.TaskCancelled)
	},
	"ChildOfFinishedParentIsClaimed": func(t *testing.T, b *bundle) {
		root := b.running(t, store.CreateTaskParams{}, "w1")
		child := b.task(t, store.CreateTaskParams{ParentID: root.ID})
		b.move(t, root.ID, store.TaskRunning, store.TaskFailed)
		if _, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: child.ID, WorkerID: "w2"}); err != nil {
			t.Fatalf("claiming the child of a failed (not cancelled) parent: %v", err)
		}
	},
	"SpawnAndClaimRaceCancel": func(t *testing.T, b *bundle) {
		root := b.running(t, store.CreateTaskParams{}, "w1")
		const spawners, each = 8, 6
		errs := race(spawners+1, func(i int) error {
			if i == spawners {
				_, err := b.s.CancelSubtree(b.ctx, store.CancelSubtreeParams{ID: root.ID})
				return err
			}
			// Each spawner is a chain of sessions: spawn a child of the
			// last running task and start it, as workers do.
			parent := root.ID
			for range each {
				res, err := b.s.CreateTask(b.ctx, store.CreateTaskParams{ParentID: parent, Spec: []byte(`{}`)})
				if err != nil {
					return err
				}
				claimed, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: res.Task.ID, WorkerID: fmt.Sprintf("w%d", i)})
				if errors.Is(err, store.ErrConflict) {
					return nil // the cancel won: the chain stops here
				}
				if err != nil {
					return err
				}
				parent = claimed.ID
			}
			return nil
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("goroutine %d: %v", i, err)
			}
		}
		tree, err := b.s.TaskTree(b.ctx, store.TaskTreeParams{RootID: root.ID})
		if err != nil {
			t.Fatal(err)
		}
		// A claim that won before the cancel is cancelled by it; one after it
		// is refused: either way nothing in the tree is left running.
		for _, task := range tree {
			if task.State == store.TaskRunning {
				t.Fatalf("task %s (depth %d) still running after the root was cancelled", task.ID, task.Depth)
			}
		}
	},
}
