package worker_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// TestFollowUpRightAfterTheEndKeepsItsWorkspace: a task reopened the
// moment its end is written, and claimed again by the same worker before
// the first run removed its workspace, runs its new round in a workspace
// that stays: the removal is done before the new round opens one. It
// failed before the fence (ending.go): the new round opened the old
// directory, the removal took it, and its command ran nowhere.
func TestFollowUpRightAfterTheEndKeepsItsWorkspace(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	root := filepath.Join(t.TempDir(), "ws")
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) { c.WorkspaceRoot = root }})
	ended, resume := make(chan uuid.UUID, 1), make(chan struct{})
	worker.SetAfterEnd(f.Workers()[0].Worker, func(id uuid.UUID) {
		select {
		case ended <- id: // the first end only: hold its cleanup
			select {
			case <-resume:
			case <-t.Context().Done():
			}
		default:
		}
	})
	spec := fleettest.Spec("two rounds",
		fleettest.Step{Text: "round one"},
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("cat README && echo two > two.txt && cat two.txt")}},
		fleettest.Step{Text: "round two: {{results}}"})
	spec.Environment = fleet.Environment{Kind: fleet.EnvLocal, Repo: repo}
	id := f.Submit(spec)
	var first uuid.UUID
	select {
	case first = <-ended:
	case <-waitCtx(t).Done():
		t.Fatal("the first round did not end")
	}
	if first != id {
		t.Fatalf("ended %s, want %s", first, id)
	}
	// The end is written, the workspace not yet removed: follow up now.
	ctx := waitCtx(t)
	task := f.Task(id)
	name, err := taskops.StoreInput(ctx, f.Store, id, "write two.txt")
	if err != nil {
		t.Fatal(err)
	}
	ends := &taskops.Completer{Store: f.Store, Queue: f.Queue}
	if moved, err := ends.Reopen(ctx, task, name); err != nil || !moved {
		t.Fatalf("reopen: moved %v, %v", moved, err)
	}
	f.WaitFor("round two claimed", id, func(t store.Task) bool { return t.State == store.TaskRunning })
	close(resume)
	done := f.WaitFor("round two to end", id, func(t store.Task) bool { return t.State.Terminal() && t.Attempts > task.Attempts })
	res := fleettest.Result(t, done)
	if done.State != store.TaskSucceeded || !strings.Contains(res.FinalText, "hello") || !strings.Contains(res.FinalText, "two") {
		t.Fatalf("round two: %s (%s) %q %q", done.State, done.Error, res.FinalText, res.Error)
	}
	testenv.Eventually(t, fleettest.Wait, "round two's workspace removed after its end", func() bool {
		_, err := os.Lstat(filepath.Join(root, id.String()))
		return errors.Is(err, fs.ErrNotExist)
	})
}
