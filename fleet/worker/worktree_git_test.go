package worker_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

// TestGitWorksInSandboxedWorktreeChild: a child in its own git worktree,
// under bubblewrap, runs git status and git diff on its change; writing
// the parent's hooks or refs from it is refused (the parent's .git is
// bound read-only), and its change still reaches the parent by the merge.
func TestGitWorksInSandboxedWorktreeChild(t *testing.T) {
	t.Parallel()
	needGit(t)
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 4, Worker: func(_ int, c *worker.Config) {
		c.Sandbox = worker.SandboxOn
	}})
	parentGit := `gd=$(sed 's/^gitdir: //' .git); echo "${gd%/worktrees/*}"`
	kid := []fleettest.Step{
		{Calls: []fleettest.Call{fleettest.Shell("echo child-edit >> a.txt && git status --short && git diff")}},
		{Calls: []fleettest.Call{fleettest.Shell(`pg=$(` + parentGit + `); (echo evil > "$pg/hooks/post-merge" && echo HOOK-WRITTEN) 2>&1 || echo HOOK-REFUSED`)}},
		{Calls: []fleettest.Call{fleettest.Shell(`(git update-ref refs/heads/pwned HEAD && echo REF-WRITTEN) 2>&1 || echo REF-REFUSED`)}},
		{Text: "child results:\n{{results}}"},
	}
	spec := sharedSpec(t, "git in a sandboxed worktree", append([]fleettest.Step{gitRepoStep}, fanOut([][]fleettest.Step{kid})...)...)
	dir := spec.Environment.WorkingDir
	res := succeeded(t, f.WaitDone(f.Submit(spec)))
	if !strings.HasPrefix(res.Sandbox, "bwrap") {
		t.Fatalf("the task ran in sandbox %q, want bubblewrap", res.Sandbox)
	}
	for _, want := range []string{" M a.txt", "+child-edit", "HOOK-REFUSED", "REF-REFUSED"} {
		if !strings.Contains(res.FinalText, want) {
			t.Errorf("the child's output lacks %q:\n%s", want, res.FinalText)
		}
	}
	if n := strings.Count(res.FinalText, "Read-only file system"); n < 2 {
		t.Errorf("want the hook and the ref refused as read-only, %d refusals say so:\n%s", n, res.FinalText)
	}
	if strings.Contains(res.FinalText, "not a git repository") {
		t.Errorf("git failed in the child:\n%s", res.FinalText)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "post-merge")); !os.IsNotExist(err) {
		t.Errorf("the child wrote the parent's hook: %v", err)
	}
	if err := exec.Command("git", "-c", "safe.directory=*", "-C", dir, "show-ref", "--verify", "--quiet", "refs/heads/pwned").Run(); err == nil {
		t.Error("the child wrote a ref of the parent's repository")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != "a\nchild-edit\n" {
		t.Errorf("the parent's a.txt after the merge is %q", got)
	}
}
