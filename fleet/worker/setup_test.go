//go:build unix

package worker_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/ociimage/ociimagetest"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// workspaceNote is the text of task id's WORKSPACE event ("" if none).
func workspaceNote(t *testing.T, f *fleettest.Fleet, id uuid.UUID) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fleettest.Wait)
	defer cancel()
	sub, err := f.Queue.SubscribeEvents(ctx, queue.EventFilter{TaskID: id.String()}, queue.FromStart())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	note := ""
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("reading the events of %s: %v", id, err)
		}
		if ev.Kind == string(agent.EventWorkspace) {
			var data struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(ev.Data, &data); err != nil {
				t.Fatalf("a WORKSPACE event %s: %v", ev.Data, err)
			}
			note = data.Text
		}
		if ev.Kind == fleet.KindSessionEnd {
			return note
		}
	}
}

// TestSecondTaskOnAnImageStartsWarm is issue 33's done-when: a task whose
// spec names an image from the in-process registry runs its setup and
// its commands with the image's go, not the worker's; a second task on
// the same image, repository and setup starts from the warm snapshot:
// the registry served no more blobs, the setup ran once, and the task's
// WORKSPACE event says warm. Both clones borrow the one mirror's objects
// (alternates), and the mirror's configuration names no remote.
func TestSecondTaskOnAnImageStartsWarm(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	repo := gitRepo(t)
	reg := ociimagetest.NewRegistry(t)
	bb, err := ociimagetest.Busybox(t, "go image").Layers()
	if err != nil {
		t.Fatal(err)
	}
	_, ref := reg.Push(t, "tools/go:1", ociimagetest.Image(t, []string{"PATH=/opt/go/bin:/bin"}, bb[0], ociimagetest.GoLayer(t)))
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.Sandbox = worker.SandboxOn
		c.Policy.Images = fleet.ImagePolicy{Allow: []string{reg.Host}}
		c.OutboundAllowPrivate = []string{"127.0.0.0/8"}
		c.ImageCache.Dir = filepath.Join(testenv.SearchableTempDir(t), "images")
		c.RepoCache.Dir = filepath.Join(testenv.SearchableTempDir(t), "repos")
	}})
	w := f.Workers()[0].Worker
	spec := fleettest.Spec("warm", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(
		`cat .toolchain; echo "runs=$(wc -l < .setup-runs)"; command -v go; test -e /usr/bin/git && echo HOST-GIT; cat README`)}},
		fleettest.Step{Text: "report: {{results}}"})
	spec.Environment = fleet.Environment{Repo: repo, Ref: "v1", Image: ref,
		Setup: "go version > .toolchain && echo ran >> .setup-runs"}

	first := f.Submit(spec)
	res := succeeded(t, f.WaitDone(first))
	for _, want := range []string{"go version go1.", "runs=1", "/opt/go/bin/go", "hello"} {
		if !strings.Contains(res.FinalText, want) {
			t.Errorf("the first task's report lacks %q:\n%s", want, res.FinalText)
		}
	}
	if strings.Contains(res.FinalText, "HOST-GIT") {
		t.Errorf("the task saw the worker's /usr/bin/git:\n%s", res.FinalText)
	}
	if note := workspaceNote(t, f, first); !strings.HasPrefix(note, "cold") || !strings.Contains(note, "setup ran") {
		t.Errorf("the first task's WORKSPACE event is %q, want cold with the setup run", note)
	}
	blobs, requests, runs := reg.BlobGETs(), reg.Requests(), worker.SetupRuns(w)
	if blobs == 0 || runs != 1 {
		t.Fatalf("after the first task: %d blobs fetched, %d setups run; want some, and 1", blobs, runs)
	}

	second := f.Submit(spec)
	res = succeeded(t, f.WaitDone(second))
	for _, want := range []string{"go version go1.", "runs=1", "/opt/go/bin/go", "hello"} {
		if !strings.Contains(res.FinalText, want) {
			t.Errorf("the second task's report lacks %q (its workspace should be the first's after setup):\n%s", want, res.FinalText)
		}
	}
	if note := workspaceNote(t, f, second); !strings.HasPrefix(note, "warm") {
		t.Errorf("the second task's WORKSPACE event is %q, want warm", note)
	}
	if got := reg.BlobGETs(); got != blobs {
		t.Errorf("the second task fetched %d more blobs from the registry, want none", got-blobs)
	}
	if got := reg.Requests(); got != requests {
		t.Errorf("the second task on the image by digest made %d registry requests, want none", got-requests)
	}
	if got := worker.SetupRuns(w); got != 1 {
		t.Errorf("%d setups ran for two tasks on one key, want 1", got)
	}

	mirrors, err := filepath.Glob(filepath.Join(worker.RepoCacheDir(w), "mirrors", "*.git"))
	if err != nil || len(mirrors) != 1 {
		t.Fatalf("mirrors %v (%v), want one for the one repository", mirrors, err)
	}
	cfg, err := os.ReadFile(filepath.Join(mirrors[0], "config"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), repo) || strings.Contains(string(cfg), "[remote") {
		t.Errorf("the mirror's config names its source:\n%s", cfg)
	}
}

// TestConcurrentTasksSetUpOnce: tasks on one key submitted together run
// the setup once; the others wait for it and start warm.
func TestConcurrentTasksSetUpOnce(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 3, Worker: func(_ int, c *worker.Config) {
		c.Sessions = 3
	}})
	spec := fleettest.Spec("together", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(`cat .prepared; git log --format=log:%s; cat .git/objects/info/alternates`)}},
		fleettest.Step{Text: "report: {{results}}"})
	spec.Environment = fleet.Environment{Repo: repo, Setup: "echo prepared > .prepared"}
	ids := []uuid.UUID{f.Submit(spec), f.Submit(spec), f.Submit(spec)}
	var wg sync.WaitGroup
	notes := make([]string, len(ids))
	for i, id := range ids {
		res := succeeded(t, f.WaitDone(id))
		if !strings.Contains(res.FinalText, "prepared") || !strings.Contains(res.FinalText, "log:root") {
			t.Errorf("task %d's workspace lacks the setup's file, or git fails in it:\n%s", i, res.FinalText)
		}
		if !strings.Contains(res.FinalText, filepath.Join(worker.RepoCacheDir(f.Workers()[0].Worker), "mirrors")) {
			t.Errorf("task %d's clone does not borrow the mirror's objects (objects/info/alternates):\n%s", i, res.FinalText)
		}
		wg.Go(func() { notes[i] = workspaceNote(t, f, id) })
	}
	wg.Wait()
	if got := worker.SetupRuns(f.Workers()[0].Worker); got != 1 {
		t.Errorf("%d setups ran for three tasks on one key, want 1 (WORKSPACE events %q)", got, notes)
	}
	warm := 0
	for _, n := range notes {
		if strings.HasPrefix(n, "warm") {
			warm++
		}
	}
	if warm != 2 {
		t.Errorf("%d of 3 tasks started warm, want 2: %q", warm, notes)
	}

	// A new commit on the branch is a new key: cold, and set up again.
	must(t, os.WriteFile(filepath.Join(repo, "README"), []byte("second\n"), 0o644))
	gitIn(t, repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-am", "second")
	id := f.Submit(spec)
	succeeded(t, f.WaitDone(id))
	if note := workspaceNote(t, f, id); !strings.HasPrefix(note, "cold") {
		t.Errorf("a task on a new commit started %q, want cold", note)
	}
	if got := worker.SetupRuns(f.Workers()[0].Worker); got != 2 {
		t.Errorf("%d setups after a task on a new commit, want 2", got)
	}
}

// TestSetupFileAndFailures: a setup naming a file of the repository runs
// it; a link there is refused; a failing setup fails its task with
// reason environment and the end of its output, and the next task on the
// key tries again.
func TestSetupFileAndFailures(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	must(t, os.MkdirAll(filepath.Join(repo, ".agentfleet"), 0o755))
	must(t, os.WriteFile(filepath.Join(repo, ".agentfleet", "setup.sh"), []byte("echo from-the-file > .made\n"), 0o644))
	must(t, os.Symlink("/etc/passwd", filepath.Join(repo, ".agentfleet", "link.sh")))
	gitIn(t, repo, "add", ".agentfleet")
	gitIn(t, repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "setup")
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	spec := func(setup string) fleet.TaskSpec {
		s := fleettest.Spec("setup", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(`cat .made`)}},
			fleettest.Step{Text: "report: {{results}}"})
		s.Environment = fleet.Environment{Repo: repo, Setup: setup}
		return s
	}
	res := succeeded(t, f.WaitDone(f.Submit(spec("./.agentfleet/setup.sh"))))
	if !strings.Contains(res.FinalText, "from-the-file") {
		t.Errorf("the setup file did not run:\n%s", res.FinalText)
	}
	for _, c := range []struct{ setup, want string }{
		{".agentfleet/link.sh", "not a regular file"},
		{"echo broken-setup; exit 3", "exit status 3"},
		{"echo broken-setup; exit 3", "broken-setup"},
	} {
		task := f.WaitDone(f.Submit(spec(c.setup)))
		r := fleettest.Result(t, task)
		if task.State != store.TaskFailed || task.Error != fleet.ReasonEnvironment || !strings.Contains(r.Error, c.want) {
			t.Errorf("setup %q: state %s, reason %s, error %q; want failed, environment, naming %q", c.setup, task.State, task.Error, r.Error, c.want)
		}
	}
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
}

// TestGitWorksInChildOfAMirroredClone: a child in a worktree of its
// parent's workspace, which borrows the mirror's objects, runs git under
// the sandbox (its sandbox binds the mirror the worker recorded for the
// parent's workspace), and so does the parent after the merge.
func TestGitWorksInChildOfAMirroredClone(t *testing.T) {
	t.Parallel()
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	repo := gitRepo(t)
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 3, Worker: func(_ int, c *worker.Config) {
		c.Sandbox = worker.SandboxOn
	}})
	kid := []fleettest.Step{
		{Calls: []fleettest.Call{fleettest.Shell("echo child-edit >> README && git status --short && git log --format=child-log:%s")}},
		{Text: "child: {{results}}"},
	}
	steps := append(fanOut([][]fleettest.Step{kid})[:2], fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("git log --format=parent-log:%s; cat README")}},
		fleettest.Step{Text: "parent: {{results}}"})
	spec := fleettest.Spec("git in a child", steps...)
	spec.Environment = fleet.Environment{Repo: repo, Ref: "v1"}
	res := succeeded(t, f.WaitDone(f.Submit(spec)))
	for _, want := range []string{"child-log:root", "parent-log:root", "child-edit"} {
		if !strings.Contains(res.FinalText, want) {
			t.Errorf("the report lacks %q (git failed in the child or the parent?):\n%s", want, res.FinalText)
		}
	}
}

func TestRepoCacheConfigErrorsNameTheKey(t *testing.T) {
	for _, c := range []struct {
		cfg  worker.RepoCacheConfig
		want string
	}{
		{worker.RepoCacheConfig{Dir: "relative"}, "repo_cache.dir must be an absolute path"},
		{worker.RepoCacheConfig{Dir: "/var/ws/cache"}, "must not lie under workspace_root"},
		{worker.RepoCacheConfig{MaxSize: "lots"}, "repo_cache.max_size"},
		{worker.RepoCacheConfig{MaxSize: "0"}, "repo_cache.max_size"},
	} {
		if err := c.cfg.Validate("/var/ws"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %q", c.cfg, err, c.want)
		}
	}
	if err := (worker.RepoCacheConfig{Dir: "/var/ws-repos", MaxSize: "5GiB"}).Validate("/var/ws"); err != nil {
		t.Errorf("a valid repo_cache: %v", err)
	}
}

// TestLongSetupKeepsItsHeartbeat: a setup longer than stale_after (1 s
// in fleettest), on a fleet of two workers, runs once, on the task's
// first claim. (The task's heartbeat runs during buildEnv so that a
// redelivery meanwhile finds it fresh; this test cannot force one.)
func TestLongSetupKeepsItsHeartbeat(t *testing.T) {
	t.Parallel()
	repo := gitRepo(t)
	f := fleettest.Start(t, fleettest.Options{Workers: 2})
	spec := fleettest.Spec("slow setup", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(`cat .slow`)}},
		fleettest.Step{Text: "report: {{results}}"})
	spec.Environment = fleet.Environment{Repo: repo, Setup: "sleep 4 && echo slow-setup-done > .slow"}
	task := f.WaitDone(f.Submit(spec))
	res := succeeded(t, task)
	if !strings.Contains(res.FinalText, "slow-setup-done") {
		t.Errorf("the setup's file is missing:\n%s", res.FinalText)
	}
	runs := int64(0)
	for _, w := range f.Workers() {
		runs += worker.SetupRuns(w.Worker)
	}
	if task.Attempts != 1 || runs != 1 {
		t.Errorf("a 4 s setup: %d claims, %d setups; want 1 and 1 (its heartbeat ran during the setup)", task.Attempts, runs)
	}
}
