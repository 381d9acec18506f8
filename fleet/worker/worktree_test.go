package worker_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker/internal/spawn"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// gitRepoStep makes the parent's working directory a git repository with
// one commit (shared.txt, a.txt) and an uncommitted file (dirty.txt) the
// children must see.
var gitRepoStep = fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(
	"git init -q && printf 'line1\\nline2\\nline3\\n' > shared.txt && echo a > a.txt && git add . && " +
		"git -c user.name=t -c user.email=t@example.com commit -qm init && echo uncommitted > dirty.txt")}}

// gitOut runs git in dir on the test's side and returns its output.
func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "safe.directory=*", "-C", dir}, args...)...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %v: %v: %s", args, err, stderr.String())
	}
	return out.String()
}

func needGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testenv.SkipOrFatal(t, "git is not installed")
	}
}

// TestOverlappingChildrenReportAConflict: three children of a git
// workspace each rewrite the same line of shared.txt in their own
// worktree. The first merge applies; the other two come back to the
// parent as conflicts naming shared.txt, their work kept on branches, so
// no edit is lost.
func TestOverlappingChildrenReportAConflict(t *testing.T) {
	t.Parallel()
	needGit(t)
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 4})
	var kids [][]fleettest.Step
	for i := range 3 {
		kids = append(kids, []fleettest.Step{
			{Calls: []fleettest.Call{fleettest.Shell(fmt.Sprintf("cat dirty.txt && sed -i 's/line1/edit-of-child-%d/' shared.txt", i))}},
			{Text: fmt.Sprintf("child %d saw {{results}}", i)},
		})
	}
	spec := sharedSpec(t, "overlapping children", append([]fleettest.Step{gitRepoStep}, fanOut(kids)...)...)
	dir := spec.Environment.WorkingDir
	res := succeeded(t, f.WaitDone(f.Submit(spec)))

	if n := strings.Count(res.FinalText, "CONFLICT"); n != 2 {
		t.Fatalf("want 2 conflicts reported, got %d:\n%s", n, res.FinalText)
	}
	if n := strings.Count(res.FinalText, "uncommitted"); n != 3 {
		t.Fatalf("want every child to see the parent's uncommitted file, got %d:\n%s", n, res.FinalText)
	}
	if !strings.Contains(res.FinalText, "in: shared.txt") {
		t.Fatalf("the conflict does not name shared.txt:\n%s", res.FinalText)
	}
	// Every child's edit is in the parent's tree or on a kept branch.
	shared, err := os.ReadFile(filepath.Join(dir, "shared.txt"))
	if err != nil {
		t.Fatal(err)
	}
	branches := strings.Fields(gitOut(t, dir, "for-each-ref", "--format=%(refname:short)", "refs/heads/agentfleet/"))
	if len(branches) != 2 {
		t.Fatalf("want the 2 conflicting children's branches kept, got %v", branches)
	}
	places := string(shared)
	for _, b := range branches {
		if !strings.Contains(res.FinalText, b) {
			t.Fatalf("the result does not name branch %s:\n%s", b, res.FinalText)
		}
		places += gitOut(t, dir, "show", b+":shared.txt")
	}
	for i := range 3 {
		if n := strings.Count(places, fmt.Sprintf("edit-of-child-%d", i)); n != 1 {
			t.Fatalf("child %d's edit is in %d places, want 1 (tree: %q):\n%s", i, n, shared, places)
		}
	}
	if strings.Count(string(shared), "edit-of-child-") != 1 {
		t.Fatalf("the parent's shared.txt should hold exactly the one merged edit: %q", shared)
	}
	// The parent's own index and HEAD are untouched: the merged change is
	// a change of its working tree.
	if st := gitOut(t, dir, "status", "--porcelain"); !strings.Contains(st, " M shared.txt") || strings.Contains(st, spawn.WorktreesDir) {
		t.Fatalf("git status of the parent:\n%s", st)
	}
}

// TestDisjointChildrenAreBothMerged: two children writing different files
// (and one changing a committed file) both land in the parent's tree
// after the waits, and no worktree or branch is left behind.
func TestDisjointChildrenAreBothMerged(t *testing.T) {
	t.Parallel()
	needGit(t)
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 4})
	kids := [][]fleettest.Step{
		{{Calls: []fleettest.Call{fleettest.Shell("echo from-child-0 > c0.txt && echo changed > a.txt")}}, {Text: "child 0 done"}},
		{{Calls: []fleettest.Call{fleettest.Shell("mkdir -p sub && echo from-child-1 > sub/c1.txt && rm dirty.txt")}}, {Text: "child 1 done"}},
	}
	// Waiting on child 0 twice in the round: the second wait finds it
	// merged and adds nothing.
	steps := append([]fleettest.Step{gitRepoStep}, fanOut(kids)...)
	steps[2].Calls = append(steps[2].Calls, waitFor(0))
	spec := sharedSpec(t, "disjoint children", steps...)
	dir := spec.Environment.WorkingDir
	id := f.Submit(spec)
	res := succeeded(t, f.WaitDone(id))

	if strings.Contains(res.FinalText, "CONFLICT") || strings.Count(res.FinalText, "merged into your working tree") != 2 {
		t.Fatalf("want two clean merges reported:\n%s", res.FinalText)
	}
	for file, want := range map[string]string{"c0.txt": "from-child-0\n", "a.txt": "changed\n", "sub/c1.txt": "from-child-1\n"} {
		got, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || string(got) != want {
			t.Fatalf("%s: %q, %v; want %q", file, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "dirty.txt")); !os.IsNotExist(err) {
		t.Fatalf("child 1 removed dirty.txt, but the parent still has it: %v", err)
	}
	if b := gitOut(t, dir, "for-each-ref", "refs/heads/agentfleet/", "refs/agentfleet/"); b != "" {
		t.Fatalf("refs left behind:\n%s", b)
	}
	if wt := gitOut(t, dir, "worktree", "list", "--porcelain"); strings.Count(wt, "worktree ") != 1 {
		t.Fatalf("worktrees left behind:\n%s", wt)
	}
	for _, c := range children(t, f, id) {
		if c.State != store.TaskSucceeded || !strings.Contains(string(c.Spec), spawn.WorktreesDir) {
			t.Fatalf("child %s: %s, spec %s", c.ID, c.State, c.Spec)
		}
	}
}

// TestReadOnlyChildSharesTheTree: a child whose permission mode is plan
// (reads only, inherited from its parent) gets no worktree: it works in
// the parent's directory, git repository or not.
func TestReadOnlyChildSharesTheTree(t *testing.T) {
	t.Parallel()
	needGit(t)
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 2})
	spec := sharedSpec(t, "read-only child", fanOut([][]fleettest.Step{{{Text: "looked"}}})...)
	dir := spec.Environment.WorkingDir
	gitOut(t, dir, "init", "-q")
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitOut(t, dir, "add", ".")
	gitOut(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "init")
	spec.Permissions = &fleet.Permissions{Mode: permission.ModePlan}
	id := f.Submit(spec)
	succeeded(t, f.WaitDone(id))
	kids := children(t, f, id)
	if len(kids) != 1 {
		t.Fatalf("%d children", len(kids))
	}
	got, err := fleet.DecodeSpec(kids[0].Spec)
	if err != nil || got.Environment.WorkingDir != dir {
		t.Fatalf("the read-only child works in %q (%v), want the parent's %q", got.Environment.WorkingDir, err, dir)
	}
	if b := gitOut(t, dir, "for-each-ref", "refs/heads/agentfleet/", "refs/agentfleet/"); b != "" {
		t.Fatalf("a read-only child made refs:\n%s", b)
	}
}

// TestReopenedChildGetsItsWorktreeBack: a child whose work a wait merged
// (and whose worktree was removed) is reopened by send_input in a new
// worktree of the parent's tree; what it does then is merged by the next
// wait, not lost in a directory nobody merges.
func TestReopenedChildGetsItsWorktreeBack(t *testing.T) {
	t.Parallel()
	needGit(t)
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 2})
	kid := []fleettest.Step{
		{Calls: []fleettest.Call{fleettest.Shell("echo one > c1.txt")}}, {Text: "first"},
		{Calls: []fleettest.Call{fleettest.Shell("cat c1.txt && echo two > c2.txt")}}, {Text: "second saw {{results}}"},
	}
	spec := sharedSpec(t, "reopened worktree", gitRepoStep,
		fleettest.Step{Calls: []fleettest.Call{fleettest.Spawn("kid", kid...)}},
		fleettest.Step{Calls: []fleettest.Call{waitFor(0)}},
		fleettest.Step{Calls: []fleettest.Call{sendInputTo(0, "and the second file")}},
		fleettest.Step{Calls: []fleettest.Call{waitFor(0)}},
		fleettest.Step{Text: "parent saw:\n{{results}}"})
	dir := spec.Environment.WorkingDir
	res := succeeded(t, f.WaitDone(f.Submit(spec)))
	if !strings.Contains(res.FinalText, "merged into your working tree: c2.txt") || !strings.Contains(res.FinalText, "one") {
		t.Fatalf("the second wait should merge c2.txt, from a worktree that has c1.txt:\n%s", res.FinalText)
	}
	for file, want := range map[string]string{"c1.txt": "one\n", "c2.txt": "two\n"} {
		if got, err := os.ReadFile(filepath.Join(dir, file)); err != nil || string(got) != want {
			t.Fatalf("%s: %q, %v; want %q", file, got, err, want)
		}
	}
}

// TestChildrenOfAFreshWorkspaceAreMerged: in the default environment (a
// fresh workspace of the parent's own under the worker's root) the
// children's worktrees are beneath it, and their files are in the
// parent's tree when it looks after the waits.
func TestChildrenOfAFreshWorkspaceAreMerged(t *testing.T) {
	t.Parallel()
	needGit(t)
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 4})
	kids := [][]fleettest.Step{
		{{Calls: []fleettest.Call{fleettest.Shell("echo kid-zero > c0.txt")}}, {Text: "0"}},
		{{Calls: []fleettest.Call{fleettest.Shell("echo kid-one > c1.txt")}}, {Text: "1"}},
	}
	steps := append([]fleettest.Step{gitRepoStep}, fanOut(kids)[:2]...)
	steps = append(steps,
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("cat c0.txt c1.txt && git status --porcelain && pwd")}},
		fleettest.Step{Text: "parent sees {{results}}"})
	id := f.Submit(fleettest.Spec("fresh workspace", steps...))
	res := succeeded(t, f.WaitDone(id))
	for _, want := range []string{"kid-zero", "kid-one", "?? c0.txt", "?? c1.txt", id.String()} {
		if !strings.Contains(res.FinalText, want) {
			t.Fatalf("the parent's look after the waits lacks %q:\n%s", want, res.FinalText)
		}
	}
	if strings.Contains(res.FinalText, spawn.WorktreesDir) {
		t.Fatalf("git status shows the worktrees:\n%s", res.FinalText)
	}
}
