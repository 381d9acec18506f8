package storetest

import (
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// family is root -> (a -> a1, b).
type family struct{ root, a, a1, b store.Task }

func (b *bundle) family(t *testing.T) family {
	t.Helper()
	var f family
	f.root = b.running(t, store.CreateTaskParams{}, "w1")
	f.a = b.task(t, store.CreateTaskParams{ParentID: f.root.ID})
	f.b = b.task(t, store.CreateTaskParams{ParentID: f.root.ID})
	f.a1 = b.task(t, store.CreateTaskParams{ParentID: f.a.ID})
	return f
}

var treeTests = map[string]func(*testing.T, *bundle){
	"Children": func(t *testing.T, b *bundle) {
		f := b.family(t)
		if f.a.RootID != f.root.ID || f.a.Depth != 1 || f.a.ParentID != f.root.ID ||
			f.a1.RootID != f.root.ID || f.a1.Depth != 2 || f.a1.ParentID != f.a.ID {
			t.Fatalf("child lineage wrong: a=%+v a1=%+v", f.a, f.a1)
		}
		res, err := b.s.Children(b.ctx, store.ChildrenParams{ParentID: f.root.ID})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(res.Children); len(got) != 2 || got[0] != f.a.ID || got[1] != f.b.ID {
			t.Fatalf("children = %v, want [a b]", got)
		}
		if res.AllTerminal() {
			t.Fatal("AllTerminal with queued children")
		}
		b.move(t, f.a.ID, store.TaskQueued, store.TaskCancelled)
		b.move(t, f.b.ID, store.TaskQueued, store.TaskFailed)
		res, err = b.s.Children(b.ctx, store.ChildrenParams{ParentID: f.root.ID})
		if err != nil || !res.AllTerminal() {
			t.Fatalf("children all finished: AllTerminal=%v err=%v", res.AllTerminal(), err)
		}
		leaf, err := b.s.Children(b.ctx, store.ChildrenParams{ParentID: f.a1.ID})
		if err != nil || len(leaf.Children) != 0 || !leaf.AllTerminal() {
			t.Fatalf("a leaf's children: %+v, %v", leaf, err)
		}
		_, err = b.s.Children(b.ctx, store.ChildrenParams{ParentID: uuid.New()})
		wantErr(t, err, store.ErrNotFound)
	},
	"ChildOfUnknownParent": func(t *testing.T, b *bundle) {
		_, err := b.s.CreateTask(b.ctx, store.CreateTaskParams{ParentID: uuid.New(), Spec: []byte(`{}`)})
		wantErr(t, err, store.ErrNotFound)
	},
	"TaskTree": func(t *testing.T, b *bundle) {
		f := b.family(t)
		other := b.task(t, store.CreateTaskParams{})
		tree, err := b.s.TaskTree(b.ctx, store.TaskTreeParams{RootID: f.root.ID})
		if err != nil {
			t.Fatal(err)
		}
		want := []uuid.UUID{f.root.ID, f.a.ID, f.b.ID, f.a1.ID}
		if got := ids(tree); len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
			t.Fatalf("tree = %v, want %v (not %s)", got, want, other.ID)
		}
		_, err = b.s.TaskTree(b.ctx, store.TaskTreeParams{RootID: uuid.New()})
		wantErr(t, err, store.ErrNotFound)
	},
	"CancelSubtree": func(t *testing.T, b *bundle) {
		f := b.family(t)
		b.move(t, f.b.ID, store.TaskQueued, store.TaskCancelled)
		if _, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: f.a.ID, WorkerID: "w2"}); err != nil {
			t.Fatal(err)
		}
		b.move(t, f.a.ID, store.TaskRunning, store.TaskWaiting)
		// Cancel the a subtree only.
		got, err := b.s.CancelSubtree(b.ctx, store.CancelSubtreeParams{ID: f.a.ID, Reason: "user asked"})
		if err != nil {
			t.Fatal(err)
		}
		byID := map[uuid.UUID]store.CancelledTask{}
		for _, c := range got {
			byID[c.ID] = c
		}
		if len(got) != 2 || byID[f.a.ID].From != store.TaskWaiting || byID[f.a1.ID].From != store.TaskQueued {
			t.Fatalf("cancelled %+v, want a (waiting) and a1 (queued)", got)
		}
		if a1 := b.get(t, f.a1.ID); a1.State != store.TaskCancelled || a1.Error != "user asked" || a1.FinishedAt.IsZero() {
			t.Fatalf("a1 after cancel: %+v", a1)
		}
		if root := b.get(t, f.root.ID); root.State != store.TaskRunning {
			t.Fatalf("cancelling a subtree touched its parent: %s", root.State)
		}
		// Then the whole tree: only the running root is left to cancel.
		got, err = b.s.CancelSubtree(b.ctx, store.CancelSubtreeParams{ID: f.root.ID})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != f.root.ID || got[0].From != store.TaskRunning || got[0].WorkerID != "w1" {
			t.Fatalf("cancelled %+v, want only the running root on w1", got)
		}
		again, err := b.s.CancelSubtree(b.ctx, store.CancelSubtreeParams{ID: f.root.ID})
		if err != nil || len(again) != 0 {
			t.Fatalf("cancelling a finished tree again: %+v, %v", again, err)
		}
		counts, err := b.s.CountTasks(b.ctx, store.CountTasksParams{RootID: f.root.ID})
		if err != nil || counts[store.TaskCancelled] != 4 || len(counts) != 1 {
			t.Fatalf("counts after cancel = %v, %v", counts, err)
		}
		_, err = b.s.CancelSubtree(b.ctx, store.CancelSubtreeParams{ID: uuid.New()})
		wantErr(t, err, store.ErrNotFound)
	},
}
