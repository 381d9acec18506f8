//go:build unix

// These tests run local tasks and check links and hard-link counts
// (syscall.Stat_t): Unix only, as a worker that runs local commands is.

package worker_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

func spawnIn(dir, title string, steps ...fleettest.Step) fleettest.Call {
	c := fleettest.Spawn(title, steps...)
	c.Args.(map[string]any)["working_dir"] = dir
	return c
}

// TestSubagentWorkingDirThroughALinkRefused: the parent plants links to
// / and to a directory outside its workspace, then spawns subagents in
// them, in "..", in an absolute path: every spawn is refused with a
// clear error and nothing is created outside the workspace; a real
// subdirectory still works (issue 27 item 1).
func TestSubagentWorkingDirThroughALinkRefused(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 2})
	kid := []fleettest.Step{{Calls: []fleettest.Call{fleettest.Shell("pwd")}}, {Text: "child in {{results}}"}}
	plant := "mkdir -p a sub && ln -s / esc && ln -s / a/esc && ln -s " + outside + " out && echo planted"
	id := f.Submit(fleettest.Spec("escaping parent",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(plant)}},
		fleettest.Step{Calls: []fleettest.Call{
			spawnIn("esc", "in esc", kid...),
			spawnIn("a/esc/b", "in a/esc/b", kid...),
			spawnIn("out/made", "in out/made", kid...),
			spawnIn("..", "in ..", kid...),
			spawnIn("/etc", "in /etc", kid...),
			spawnIn("sub/../..", "in sub/../..", kid...),
		}},
		fleettest.Step{Text: "spawns said: {{results}}"}))
	res := succeeded(t, f.WaitDone(id))
	if n := strings.Count(res.FinalText, "symbolic link"); n != 3 {
		t.Errorf("%d spawns refused for a link, want 3 (esc, a/esc/b, out/made):\n%s", n, res.FinalText)
	}
	if n := strings.Count(res.FinalText, "is refused"); n != 6 {
		t.Errorf("%d spawns refused, want all 6:\n%s", n, res.FinalText)
	}
	if kids := children(t, f, id); len(kids) != 0 {
		t.Errorf("%d children were created, want none", len(kids))
	}
	if _, err := os.Stat(filepath.Join(outside, "made")); !os.IsNotExist(err) {
		t.Errorf("a directory was made through the link: %v", err)
	}

	good := f.Submit(fleettest.Spec("good parent",
		fleettest.Step{Calls: []fleettest.Call{spawnIn("sub/dir", "in sub/dir", kid...)}},
		fleettest.Step{Calls: []fleettest.Call{waitFor(0)}},
		fleettest.Step{Text: "child said: {{results}}"}))
	res = succeeded(t, f.WaitDone(good))
	if !strings.Contains(res.FinalText, filepath.Join(good.String(), "sub", "dir")) {
		t.Fatalf("the child did not run in sub/dir:\n%s", res.FinalText)
	}
}

// TestSharedWorkingDirThroughALinkRefused: a working_dir under a shared
// root that passes through a link is refused by the worker (the text is
// under the root; what it names is not), and nothing is made there.
func TestSharedWorkingDirThroughALinkRefused(t *testing.T) {
	t.Parallel()
	shared, outside := t.TempDir(), t.TempDir()
	must(t, os.Symlink(outside, filepath.Join(shared, "link")))
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.Policy.SharedRoots = []string{shared}
	}})
	spec := fleettest.Spec("through a link", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("touch pwned")}}, fleettest.Step{Text: "done"})
	spec.Environment = fleet.Environment{Kind: fleet.EnvLocal, WorkingDir: filepath.Join(shared, "link", "x"), Shared: true}
	task := f.WaitDone(f.Submit(spec))
	res := fleettest.Result(t, task)
	if task.State != store.TaskFailed || task.Error != fleet.ReasonNotAllowed || !strings.Contains(res.Error, "symbolic link") {
		t.Fatalf("task %s %q %q, want failed not_allowed for the link", task.State, task.Error, res.Error)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("the task reached the link's target: %v", entries)
	}
}

// TestWorkerRefusesWorkingDirWithoutSharedRoots: a spec that reached a
// worker without passing a dispatcher (or past one configured otherwise)
// is refused by the worker's own policy, naming the field.
func TestWorkerRefusesWorkingDirWithoutSharedRoots(t *testing.T) {
	t.Parallel()
	host := t.TempDir()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.Policy.SharedRoots = nil
	}})
	for _, env := range []fleet.Environment{
		{Kind: fleet.EnvLocal, WorkingDir: host, Shared: true},
		{Kind: fleet.EnvLocal, WorkingDir: host},
	} {
		spec := fleettest.Spec("host dir", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("touch pwned")}}, fleettest.Step{Text: "done"})
		spec.Environment = env
		task := f.WaitDone(f.Submit(spec))
		res := fleettest.Result(t, task)
		if task.State != store.TaskFailed || task.Error != fleet.ReasonNotAllowed || !strings.Contains(res.Error, "environment.") {
			t.Fatalf("%+v: task %s %q %q, want failed not_allowed naming the field", env, task.State, task.Error, res.Error)
		}
	}
	if _, err := os.Stat(filepath.Join(host, "pwned")); !os.IsNotExist(err) {
		t.Fatalf("a refused task wrote the host directory: %v", err)
	}
}

// TestLocalCloneSharesNoObjects: a task cloned from a local repository
// leaves the source's objects with one link each (copied, not
// hard-linked), so rewriting its own cannot poison the source.
func TestLocalCloneSharesNoObjects(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	spec := fleettest.Spec("clone", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("git log --oneline | wc -l")}}, fleettest.Step{Text: "{{results}}"})
	spec.Environment = fleet.Environment{Repo: repo}
	succeeded(t, f.WaitDone(f.Submit(spec)))
	n := 0
	must(t, filepath.WalkDir(filepath.Join(repo, ".git", "objects"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			return err
		}
		n++
		if st.Nlink != 1 {
			t.Errorf("%s has %d links after the clone, want 1", p, st.Nlink)
		}
		return nil
	}))
	if n == 0 {
		t.Fatal("the source has no loose objects to check")
	}

	// A local path outside policy.repositories.allow_local is refused.
	f2 := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.Policy.Repositories.AllowLocal = []string{"/nonexistent-repositories"}
	}})
	task := f2.WaitDone(f2.Submit(spec))
	if res := fleettest.Result(t, task); task.Error != fleet.ReasonNotAllowed || !strings.Contains(res.Error, "environment.repo") {
		t.Fatalf("task %s %q %q, want not_allowed naming environment.repo", task.State, task.Error, res.Error)
	}
}

// TestCloneOfLoopbackGetsNoRequest: a repository on a loopback listener
// is refused before git runs; the listener sees no connection.
func TestCloneOfLoopbackGetsNoRequest(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer func() { _ = ln.Close() }()
	var conns atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			_ = c.Close()
		}
	}()
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	spec := fleettest.Spec("clone loopback", fleettest.Step{Text: "done"})
	spec.Environment = fleet.Environment{Repo: "https://" + ln.Addr().String() + "/admin/repo.git"}
	task := f.WaitDone(f.Submit(spec))
	if res := fleettest.Result(t, task); task.Error != fleet.ReasonNotAllowed || !strings.Contains(res.Error, "loopback") {
		t.Fatalf("task %s %q %q, want not_allowed for a loopback address", task.State, task.Error, res.Error)
	}
	if n := conns.Load(); n != 0 {
		t.Fatalf("the loopback listener got %d connections", n)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestWorkerResolvesAChildsWorkingDir: a subagent's spec that names a
// directory through a link in its parent's workspace (as a spawner that
// checked only the text would have written it) is refused by the worker
// that builds the child's workspace, and nothing is made through the link.
func TestWorkerResolvesAChildsWorkingDir(t *testing.T) {
	t.Parallel()
	root, outside := filepath.Join(t.TempDir(), "ws"), t.TempDir()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) { c.WorkspaceRoot = root }})
	// The parent writes a file, so that its workspace exists until the
	// worker removes it after writing its end (a workspace is made on first
	// use: one never made would read as removed while the removal is still
	// to come).
	parent := f.Submit(fleettest.Spec("parent", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("touch made")}}, fleettest.Step{Text: "done"}))
	succeeded(t, f.WaitDone(parent))
	// Plant the link once the removal is done, or the removal takes the
	// link with it.
	testenv.Eventually(t, fleettest.Wait, "the parent's workspace removed", func() bool {
		_, err := os.Lstat(filepath.Join(root, parent.String()))
		return errors.Is(err, fs.ErrNotExist)
	})
	must(t, os.MkdirAll(filepath.Join(root, parent.String()), 0o755))
	must(t, os.Symlink(outside, filepath.Join(root, parent.String(), "esc")))
	spec := fleettest.Spec("child", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("touch pwned")}}, fleettest.Step{Text: "done"})
	spec.Environment = fleet.Environment{Kind: fleet.EnvLocal, WorkingDir: filepath.Join(root, parent.String(), "esc", "sub")}
	spec.ParentID, spec.RootID, spec.Depth = parent, parent, 1
	spec = spec.WithDefaults()
	body, err := json.Marshal(spec)
	must(t, err)
	ctx := waitCtx(t)
	res, err := f.Store.CreateTask(ctx, store.CreateTaskParams{ParentID: parent, Queue: spec.Queue, Spec: body})
	must(t, err)
	if _, err := f.Queue.Send(ctx, queue.ToWorker(f.Workers()[0].ID()), queue.TaskMessage{Type: queue.MsgStart, TaskID: res.Task.ID.String()},
		"start:"+res.Task.ID.String()); err != nil {
		t.Fatal(err)
	}
	task := f.WaitDone(res.Task.ID)
	if r := fleettest.Result(t, task); task.Error != fleet.ReasonNotAllowed || !strings.Contains(r.Error, "symbolic link") {
		t.Fatalf("child %s %q %q, want not_allowed for the link", task.State, task.Error, r.Error)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Fatalf("the child reached the link's target: %v", entries)
	}
}
