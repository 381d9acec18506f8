package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

// A worker that is not root, with a subordinate uid range, runs each
// tree as a subordinate uid of its own: what a command makes is that
// uid's on the host, with the worker's group, so the file tools still
// write it and the worker removes it; another tree, even one shown the
// host's temporary directory, cannot read the first's home or /tmp; the
// two trees' processes have different uids, neither the worker's; and
// nothing inside makes a user namespace.
//
// It needs a worker that is not root. CI's make test runs as root, so
// .ci/redteam-user.sh runs this test as a plain user with a subordinate
// range and AGENTFLEET_REQUIRE_INTEGRATION=1 (a missing range fails), and
// the red-team suite's cross-task probe checks the same through a fleet.
func TestSubordinateUIDsSeparateTasks(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("the worker is root: its tasks get uids of sandbox_uid_range (TestRootWorkerSandboxesRunAsUidsOfTheirOwn); .ci/redteam-user.sh runs this test as a plain user")
	}
	first, last, err := sandbox.SubordinateRange()
	if err != nil {
		testenv.SkipOrFatal(t, "subordinate uids: "+err.Error())
	}
	ids := sandbox.NewIDs(first, last)
	parent := testenv.SearchableTempDir(t)
	wsA, wsB := filepath.Join(parent, "a"), filepath.Join(parent, "b")
	for _, d := range []string{wsA, wsB} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	a := newLocal(t, wsA, sandbox.Settings{IDs: ids, Tree: "tree-a"})
	b := newLocal(t, wsB, sandbox.Settings{IDs: ids, Tree: "tree-b", ReadOnly: []string{os.TempDir()}})
	ctx := context.Background()

	if out, code := sh(t, a, `echo tmp-canary > /tmp/private && echo home-canary > ~/private && echo made > made && mkdir -m 0500 ro && id -u`); code != 0 || out != strconv.Itoa(sandbox.InnerID) {
		t.Fatalf("a: exit %d, %q", code, out)
	}
	uidA := owner(t, filepath.Join(wsA, "made"))
	if uidA <= first || uidA > last || uidA == os.Getuid() {
		t.Fatalf("a command's file is owned by %d on the host; want a uid of %d-%d (not the worker's %d)", uidA, first+1, last, os.Getuid())
	}
	if err := a.WriteFile(ctx, "made", []byte("rewritten by a tool")); err != nil {
		t.Fatalf("the file tools cannot write what the task made: %v", err)
	}
	if err := a.WriteFile(ctx, "tool/x", []byte("tool\n")); err != nil {
		t.Fatal(err)
	}
	if out, code := sh(t, a, `echo task >> tool/x && cat tool/x made`); code != 0 || out != "tool\ntask\nrewritten by a tool" {
		t.Fatalf("the task cannot write what the file tools made: exit %d, %q", code, out)
	}

	if out, code := sh(t, b, "true"); code != 0 {
		t.Fatalf("b cannot start (%q), so its refusals below would prove nothing: run the test with a TMPDIR other users may search (mode 0711)", out)
	}
	// The worker's uid reaches a's private files; b's does not.
	private, _ := filepath.Glob(filepath.Join(os.TempDir(), "*", "tmp", "private"))
	if len(private) != 1 {
		t.Fatalf("a's /tmp/private on the host: %v", private)
	}
	if data, err := os.ReadFile(private[0]); err != nil || string(data) != "tmp-canary\n" {
		t.Fatalf("the worker cannot read a's /tmp (%q, %v): the test proves nothing", data, err)
	}
	home := filepath.Join(filepath.Dir(filepath.Dir(private[0])), "home", "private")
	if out, code := sh(t, b, "cat "+private[0]+" "+home+"; ls "+filepath.Dir(private[0])); code == 0 || strings.Contains(out, "-canary") {
		t.Fatalf("b read a's private files: exit %d, %q", code, out)
	}

	// a's and b's processes have uids of their own, neither the worker's.
	uidOf := func(env *sandbox.Local) int {
		marker := fmt.Sprintf("agentfleet-subuid-probe-%d", time.Now().UnixNano())
		p, err := env.StartProcess(ctx, execenv.ProcessRequest{Command: "exec -a " + marker + " sleep 60"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		var pid string
		testenv.Eventually(t, 10*time.Second, "the process running", func() bool {
			out, _ := exec.Command("pgrep", "-f", "^"+marker).Output()
			pid = strings.TrimSpace(string(out))
			return pid != ""
		})
		status, err := os.ReadFile("/proc/" + pid + "/status")
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				n, _ := strconv.Atoi(strings.Fields(v)[0])
				return n
			}
		}
		t.Fatal("no Uid line")
		return 0
	}
	pa, pb := uidOf(a), uidOf(b)
	if pa != uidA || pb == uidA || pb == os.Getuid() || pb <= first || pb > last {
		t.Fatalf("processes run as %d (a) and %d (b); want a's %d and another of the range, not the worker's %d", pa, pb, uidA, os.Getuid())
	}

	if out, code := sh(t, a, "cat /proc/sys/user/max_user_namespaces; unshare -Ur true && echo NESTED"); strings.Contains(out, "NESTED") || !strings.HasPrefix(out, "0") {
		t.Fatalf("a nested user namespace: exit %d, %q", code, out)
	}

	// A tree whose environments all ended gave its uid back; the next
	// environment on its workspace, of another uid, gets its files.
	wsC := filepath.Join(parent, "c")
	if err := os.Mkdir(wsC, 0o755); err != nil {
		t.Fatal(err)
	}
	c1 := newLocal(t, wsC, sandbox.Settings{IDs: ids, Tree: "tree-c"})
	if out, code := sh(t, c1, "git init -q && echo x > f && chmod 600 f"); code != 0 {
		t.Fatalf("c1: exit %d, %q", code, out)
	}
	if err := c1.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	c2 := newLocal(t, wsC, sandbox.Settings{IDs: ids, Tree: "tree-c"})
	if out, code := sh(t, c2, "git status --short && chmod 644 f && stat -c %u . .git f"); code != 0 || out != "?? f\n1000\n1000\n1000" {
		t.Fatalf("the tree's next environment, another uid, on its files: exit %d, %q", code, out)
	}

	// The worker removes what a made, its read-only directory too.
	if err := a.Cleanup(ctx); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(wsA); err != nil {
		t.Fatalf("the worker cannot remove a's workspace: %v", err)
	}
	if _, err := os.Stat(filepath.Dir(private[0])); !os.IsNotExist(err) {
		t.Fatalf("a's home and /tmp are left: %v", err)
	}
}
