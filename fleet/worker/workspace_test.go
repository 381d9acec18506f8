package worker_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/internal/testenv"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/store"
)

func gitRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "root"},
		{"tag", "v1"},
	} {
		if err := os.WriteFile(filepath.Join(dir, "README"), []byte("hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_ = exec.Command("git", "-C", dir, "add", "README").Run() // the next command reports git missing
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			testenv.SkipOrFatal(t, fmt.Sprintf("git unavailable: %v %s", err, out))
		}
	}
	return dir
}

// TestGitWorkspaceDiffAndCleanup: a task in a repository cloned at a ref
// stores its `git diff` as an artifact, and its workspace is deleted once
// it succeeded.
func TestGitWorkspaceDiffAndCleanup(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	root := filepath.Join(t.TempDir(), "ws")
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) { c.WorkspaceRoot = root }})
	spec := fleettest.Spec("edit",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo changed > README && echo new > added.txt")}},
		fleettest.Step{Text: "edited"})
	spec.Environment = fleet.Environment{Repo: repo, Ref: "v1"}
	id := f.Submit(spec)
	succeeded(t, f.WaitDone(id))
	diff, err := f.Store.GetArtifact(waitCtx(t), store.GetArtifactParams{TaskID: id, Kind: "diff"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-hello", "+changed", "added.txt", "+new"} {
		if !strings.Contains(string(diff.Content), want) {
			t.Fatalf("diff lacks %q:\n%s", want, diff.Content)
		}
	}
	f.Workers()[0].Stop(t) // waits for the handler, which cleans up after writing the state
	if _, err := os.Stat(filepath.Join(root, id.String())); !os.IsNotExist(err) {
		t.Fatalf("workspace of a succeeded task still there: %v", err)
	}
}

// TestSpawnLimits: the depth limit (the child has no spawn_agent) and the
// cap on live children give the model error results, and the task goes on.
func TestSpawnLimits(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 2})
	grandchild := fleettest.Spawn("too deep", fleettest.Step{Text: "never"})
	// The first child stays live until the parent, past its second spawn,
	// creates "release" in the workspace they share: otherwise it could end
	// before the second spawn is counted, and nothing would be refused.
	hold := fleettest.Shell("timeout 60 sh -c 'until [ -e release ]; do sleep 0.05; done'")
	child := []fleettest.Step{{Calls: []fleettest.Call{hold}}, {Calls: []fleettest.Call{grandchild}}, {Text: "child saw: {{results}}"}}
	spec := sharedSpec(t, "limits",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Spawn("first", child...), fleettest.Spawn("second", child...)}},
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("touch release")}},
		fleettest.Step{Calls: []fleettest.Call{{Name: "wait", Args: map[string]any{"agent_id": "{{agent:0}}"}}}},
		fleettest.Step{Text: "parent saw: {{results}}"})
	spec.MaxLiveChildren = 1
	res := succeeded(t, f.WaitDone(f.Submit(spec)))
	if !strings.Contains(res.FinalText, "limit is 1") {
		t.Fatalf("the second spawn was not refused:\n%s", res.FinalText)
	}
	// A child at the depth limit has no subagent tools at all.
	if !strings.Contains(res.FinalText, `Unknown tool: \"spawn_agent\"`) {
		t.Fatalf("the child's spawn beyond the depth limit was not refused:\n%s", res.FinalText)
	}
}

// TestFreshWorkspaceCreatedOnFirstUse: the fresh workspace of a task
// without a repository is made only when the task touches it. Failed tasks
// keep their workspace (KeepFailed), so a directory made and not removed
// would show: one that only talked to the model leaves none, not even the
// workspace root, and one that wrote a file keeps it.
func TestFreshWorkspaceCreatedOnFirstUse(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "ws")
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.WorkspaceRoot, c.KeepFailed = root, time.Hour
	}})
	fail := fleettest.Step{Fail: &sim.Failure{Kind: llm.ErrInvalidRequest}, FailTimes: 1000}
	trivial := f.Submit(fleettest.Spec("trivial", fleettest.Step{Text: "done"}))
	silent := f.Submit(fleettest.Spec("silent failure", fail))
	succeeded(t, f.WaitDone(trivial))
	if task := f.WaitDone(silent); task.State != store.TaskFailed {
		t.Fatalf("task %s, want failed", task.State)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Fatalf("tasks that never touched their workspace created %s: %v", root, err)
	}
	writer := f.Submit(fleettest.Spec("writer",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo kept > f.txt")}}, fail))
	if task := f.WaitDone(writer); task.State != store.TaskFailed {
		t.Fatalf("task %s, want failed", task.State)
	}
	if b, err := os.ReadFile(filepath.Join(root, writer.String(), "f.txt")); err != nil || string(b) != "kept\n" {
		t.Fatalf("the writer's workspace holds %q, %v; want its file", b, err)
	}
}

// TestResumedTaskFindsItsWorkspace: a task handed back by a draining
// worker finds the files it wrote when another worker resumes it.
func TestResumedTaskFindsItsWorkspace(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "ws")
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.WorkspaceRoot, c.DrainGrace = root, 100*time.Millisecond
	}})
	id := runningAtGate(t, f, "resume",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo written-before > f.txt")}},
		fleettest.Step{Gate: "resume", Calls: []fleettest.Call{fleettest.Shell("cat f.txt")}},
		fleettest.Step{Text: "read: {{results}}"})
	f.Workers()[0].Stop(t)
	if task := f.Task(id); task.State != store.TaskQueued {
		t.Fatalf("after the drain the task is %s, want queued", task.State)
	}
	f.Model.Open("resume")
	f.StartWorker()
	res := succeeded(t, f.WaitDone(id))
	if !strings.Contains(res.FinalText, "Output:\nwritten-before") {
		t.Fatalf("the resumed task did not find its file: %q", res.FinalText)
	}
}
