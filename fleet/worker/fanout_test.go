package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// storeFleet is a fleet whose workers reach a fleet git store served by a
// real dispatcher handler on loopback (dispatcher.NewGitStore).
type storeFleet struct {
	*fleettest.Fleet
	dir string // the store's repositories
}

// startStoreFleet starts n workers with separate workspace roots and the
// fleet git store; worker i serves the queues queues(i).
func startStoreFleet(t *testing.T, n int, qc queue.Config, queues func(i int) []string) *storeFleet {
	t.Helper()
	needGit(t)
	var h atomic.Pointer[dispatcher.GitStore]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g := h.Load(); g != nil {
			g.ServeHTTP(w, r)
			return
		}
		http.Error(w, "not ready", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	const cred = "workers-credential-for-the-test"
	f := fleettest.Start(t, fleettest.Options{Workers: n, Slots: 2, Queue: qc, Worker: func(i int, c *worker.Config) {
		c.GitStore = worker.GitStoreConfig{URL: srv.URL, Token: cred}
		c.OutboundAllowPrivate = []string{"127.0.0.0/8"}
		c.Queues = queues(i)
	}})
	sf := &storeFleet{Fleet: f, dir: t.TempDir()}
	g, err := dispatcher.NewGitStore(dispatcher.GitStoreConfig{Dir: sf.dir, Key: "a key of at least sixteen bytes",
		WorkerToken: cred}, f.Store, nil)
	if err != nil {
		t.Fatal(err)
	}
	h.Store(g)
	return sf
}

// upstream makes a repository for tasks to clone: main.txt and a check
// script, committed.
func upstream(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "upstream")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, "main.txt"), []byte("upstream\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "add", ".")
	gitOut(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init")
	return dir
}

// startOn sends the start of task spec to worker id alone (its own
// subject), as the test's way to put a parent on worker A.
func startOn(t *testing.T, f *fleettest.Fleet, spec fleet.TaskSpec, id string) uuid.UUID {
	t.Helper()
	spec = spec.WithDefaults()
	if err := spec.ValidateSubmission(); err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(spec)
	ctx := waitCtx(t)
	res, err := f.Store.CreateTask(ctx, store.CreateTaskParams{Queue: spec.Queue, Priority: spec.Priority, Spec: body})
	if err != nil {
		t.Fatal(err)
	}
	o := taskops.StartMessage(res.Task, time.Time{})
	if _, err := f.Queue.Send(ctx, queue.ToWorker(id), o.Msg, o.MsgID); err != nil {
		t.Fatal(err)
	}
	return res.Task.ID
}

// notOnA: worker 0 (A) serves a queue no task uses, so the children
// (on the parent's queue, the default one) run on the others.
func notOnA(i int) []string {
	if i == 0 {
		return []string{"only-a"}
	}
	return []string{fleet.DefaultQueue}
}

// fourChildren is a parent's script: an uncommitted edit, four children
// that each read it and write a file of their own, the waits, the answer.
func fourChildren(gate string) []fleettest.Step {
	var kids [][]fleettest.Step
	for i := range 4 {
		kids = append(kids, []fleettest.Step{
			{Gate: gate, Calls: []fleettest.Call{fleettest.Shell(fmt.Sprintf("cat parent.txt && echo child-%d > c%d.txt", i, i))}},
			{Text: fmt.Sprintf("child %d saw {{results}}", i)},
		})
	}
	first := fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo parent-edit > parent.txt")}}
	return append([]fleettest.Step{first}, fanOut(kids)...)
}

// allFourCheck passes when the parent's tree holds its edit and the four
// children's files.
var allFourCheck = fleet.Check{Name: "all-four", Command: "grep -q parent-edit parent.txt && " +
	"for i in 0 1 2 3; do grep -qx child-$i c$i.txt || exit 1; done"}

func artifact(t *testing.T, f *fleettest.Fleet, id uuid.UUID, kind string) string {
	t.Helper()
	a, err := f.Store.GetArtifact(context.Background(), store.GetArtifactParams{TaskID: id, Kind: kind})
	if err != nil {
		t.Fatalf("artifact %s of %s: %v", kind, id, err)
	}
	return string(a.Content)
}

// TestParentWorkerKilledWhileChildrenRun: worker A dies for good while
// its parked task's four children run on B and C. The children push their
// work; the parent's resume, stranded on A's subject, is moved to the
// shared queue; the worker that takes it restores the parent's files
// (its uncommitted edit included) from the fleet git store and merges the
// four children's work: nothing is lost, and the check passes.
func TestParentWorkerKilledWhileChildrenRun(t *testing.T) {
	t.Parallel()
	f := startStoreFleet(t, 3, queue.Config{WorkerInactiveThreshold: time.Second}, notOnA)
	spec := fleettest.Spec("parent's worker killed", fourChildren("kids-run")...)
	spec.Environment = fleet.Environment{Kind: fleet.EnvLocal, Repo: upstream(t)}
	spec.Checks = []fleet.Check{allFourCheck}
	id := startOn(t, f.Fleet, spec, "w0")
	if err := f.Model.WaitArrivals(waitCtx(t), "kids-run", 4); err != nil {
		t.Fatal(err)
	}
	if p := f.WaitState(id, store.TaskWaiting); p.WorkerID != "w0" {
		t.Fatalf("the parent parked on %q, want w0", p.WorkerID)
	}
	f.Workers()[0].Kill(t)
	f.Model.Open("kids-run")
	parent := f.WaitDone(id)
	res := succeeded(t, parent)
	if parent.WorkerID == "w0" || parent.WorkerID == "" {
		t.Fatalf("the parent finished on %q, want a survivor", parent.WorkerID)
	}
	if strings.Count(res.FinalText, "merged into your working tree") != 4 {
		t.Fatalf("want four clean merges after the restore:\n%s", res.FinalText)
	}
	diff := artifact(t, f.Fleet, id, "diff")
	for _, want := range []string{"+parent-edit", "+child-0", "+child-1", "+child-2", "+child-3"} {
		if !strings.Contains(diff, want) {
			t.Fatalf("the parent's diff lacks %q:\n%s", want, diff)
		}
	}
	if res.Checks == nil || res.Checks.Verdict != fleet.VerdictPassed {
		t.Fatalf("checks: %+v", res.Checks)
	}
}

// TestChildrenLocalKeepsThemOnTheParentsWorker: with a fleet git store,
// environment.children: local still runs the children on the parent's
// worker, in worktrees of its tree, and pushes nothing to the store.
func TestChildrenLocalKeepsThemOnTheParentsWorker(t *testing.T) {
	t.Parallel()
	f := startStoreFleet(t, 2, queue.Config{}, notOnA)
	spec := fleettest.Spec("children local", fourChildren("")...)
	spec.Environment = fleet.Environment{Kind: fleet.EnvLocal, Repo: upstream(t), Children: fleet.ChildrenLocal}
	spec.Checks = []fleet.Check{allFourCheck}
	id := startOn(t, f.Fleet, spec, "w0")
	res := succeeded(t, f.WaitDone(id))
	if strings.Count(res.FinalText, "merged into your working tree") != 4 {
		t.Fatalf("want four clean merges:\n%s", res.FinalText)
	}
	for _, c := range children(t, f.Fleet, id) {
		spec, err := fleet.DecodeSpec(c.Spec)
		if err != nil || spec.Environment.StoreBase != "" || c.WorkerID != "w0" {
			t.Fatalf("child %s ran on %s with spec %s (%v); want w0, no store_base", c.ID, c.WorkerID, c.Spec, err)
		}
	}
	if entries, _ := os.ReadDir(f.dir); len(entries) != 0 {
		t.Fatalf("the store holds %d repositories, want none", len(entries))
	}
}

// TestTravelingChildrenConflict: two children on other workers rewrite
// the same line of a file the parent committed; the first merge applies,
// the second comes back as a CONFLICT naming the file and the branch that
// keeps the child's work, which holds its edit.
func TestTravelingChildrenConflict(t *testing.T) {
	t.Parallel()
	f := startStoreFleet(t, 3, queue.Config{}, notOnA)
	var kids [][]fleettest.Step
	for i := range 2 {
		kids = append(kids, []fleettest.Step{
			{Calls: []fleettest.Call{fleettest.Shell(fmt.Sprintf("sed -i 's/upstream/edit-of-child-%d/' main.txt", i))}},
			{Text: fmt.Sprintf("child %d done", i)},
		})
	}
	spec := fleettest.Spec("traveling conflict", fanOut(kids)...)
	spec.Environment = fleet.Environment{Kind: fleet.EnvLocal, Repo: upstream(t)}
	id := startOn(t, f.Fleet, spec, "w0")
	res := succeeded(t, f.WaitDone(id))
	if strings.Count(res.FinalText, "CONFLICT") != 1 || strings.Count(res.FinalText, "merged into your working tree: main.txt") != 1 {
		t.Fatalf("want one merge and one conflict on main.txt:\n%s", res.FinalText)
	}
	if !strings.Contains(res.FinalText, "in: main.txt") || !strings.Contains(res.FinalText, "branch agentfleet/") {
		t.Fatalf("the conflict does not name the file and the branch:\n%s", res.FinalText)
	}
}

// TestFanOutOfARepositoryTheTaskMade: a parent without environment.repo
// makes its repository in its workspace; its two children, on other
// workers, start from a whole bundle of it in empty workspaces, and both
// edits come back.
func TestFanOutOfARepositoryTheTaskMade(t *testing.T) {
	t.Parallel()
	f := startStoreFleet(t, 3, queue.Config{}, notOnA)
	kids := [][]fleettest.Step{
		{{Calls: []fleettest.Call{fleettest.Shell("cat dirty.txt && echo from-child-0 > c0.txt")}}, {Text: "child 0 saw {{results}}"}},
		{{Calls: []fleettest.Call{fleettest.Shell("cat dirty.txt && sed -i 's/line2/edited/' shared.txt")}}, {Text: "child 1 saw {{results}}"}},
	}
	spec := fleettest.Spec("uncloned fan-out", append([]fleettest.Step{gitRepoStep}, fanOut(kids)...)...)
	id := startOn(t, f.Fleet, spec, "w0")
	res := succeeded(t, f.WaitDone(id))
	if strings.Count(res.FinalText, "uncommitted") != 2 || strings.Count(res.FinalText, "merged into your working tree") != 2 {
		t.Fatalf("want both children to see dirty.txt and both merged:\n%s", res.FinalText)
	}
	for _, c := range children(t, f.Fleet, id) {
		if c.WorkerID == "w0" {
			t.Fatalf("child %s ran on the parent's worker", c.ID)
		}
	}
	diff := artifact(t, f.Fleet, id, "diff")
	for _, want := range []string{"+from-child-0", "+edited", "+uncommitted"} {
		if !strings.Contains(diff, want) {
			t.Fatalf("the parent's diff lacks %q:\n%s", want, diff)
		}
	}
}
