package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

// A sandboxed command has nothing to escalate with, whoever runs the
// worker: no capability, no user namespace of its own, no mount, no
// device node; and the seccomp filter refuses what a coding task never
// needs.
func TestNothingToEscalateWith(t *testing.T) {
	l := newLocal(t, testenv.SearchableTempDir(t), sandbox.Settings{})
	for _, c := range []struct {
		name, script string
		ok           bool
		want         string
	}{
		{"no capabilities", `grep -E '^Cap(Eff|Prm|Amb):' /proc/self/status`, true, "CapEff:\t0000000000000000"},
		{"no user namespace", `unshare -Ur true`, false, ""},
		{"no network namespace", `unshare -n true`, false, ""},
		{"no mount", `mkdir -p /tmp/x && mount -t tmpfs none /tmp/x`, false, ""},
		{"no device node", `mknod /tmp/disk b 8 0`, false, ""},
		{"the inner uid", `id -u`, true, fmt.Sprint(sandbox.InnerID)},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, code := sh(t, l, c.script)
			if (code == 0) != c.ok || !strings.Contains(out, c.want) {
				t.Fatalf("%q: exit %d, %q; want success %v with %q", c.script, code, out, c.ok, c.want)
			}
		})
	}
}

// The seccomp filter answers EPERM to calls an unprivileged process could
// otherwise make (name_to_handle_at), and ENOSYS to clone3, whose flags it
// cannot read; plain threads and processes still work.
func TestSeccompRefusesWhatNoTaskNeeds(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		testenv.SkipOrFatal(t, "the probe needs /usr/bin/python3")
	}
	l := newLocal(t, testenv.SearchableTempDir(t), sandbox.Settings{})
	nr := map[string]struct{ handle, clone3 int }{"amd64": {303, 435}, "arm64": {264, 435}}[runtime.GOARCH]
	if nr.handle == 0 {
		// The filter is built for amd64 and arm64 only; CI is amd64.
		t.Skip("no syscall numbers for this architecture in the probe")
	}
	script := fmt.Sprintf(`/usr/bin/python3 -c '
import ctypes, os, threading
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(128); buf[0] = 120
mnt = ctypes.c_int()
r = libc.syscall(%d, -100, b"/usr/bin", buf, ctypes.byref(mnt), 0)
print("handle", r, ctypes.get_errno())
r = libc.syscall(%d, 0, 0)
print("clone3", r, ctypes.get_errno())
t = threading.Thread(target=lambda: None); t.start(); t.join()
print("fork", os.system("true"))
'`, nr.handle, nr.clone3)
	out, code := sh(t, l, script)
	want := fmt.Sprintf("handle -1 %d\nclone3 -1 %d\nfork 0", syscall.EPERM, syscall.ENOSYS)
	if code != 0 || out != want {
		t.Fatalf("exit %d:\n%s\nwant:\n%s", code, out, want)
	}
}

// The filter builds, and is whole instructions.
func TestSeccompFilterBuilds(t *testing.T) {
	prog, err := sandbox.Seccomp()
	if err != nil || len(prog) == 0 || len(prog)%8 != 0 {
		t.Fatalf("%d bytes, %v; want whole 8-byte instructions", len(prog), err)
	}
}

// A root worker's sandbox runs as a uid of the range outside: what a
// command writes belongs to it, the workspace and the files the file
// tools write too, and root's files stay unreadable. Two trees have two
// uids, which cannot read each other's private files or signal each
// other's processes.
func TestRootWorkerSandboxesRunAsUidsOfTheirOwn(t *testing.T) {
	testenv.SkipUnlessRoot(t, "the worker is not root: its sandboxes run as its own uid")
	ids := sandbox.NewIDs(sandbox.DefaultUIDFirst, sandbox.DefaultUIDLast)
	parent := testenv.SearchableTempDir(t)
	wsA, wsB := filepath.Join(parent, "a"), filepath.Join(parent, "b")
	for _, d := range []string{wsA, wsB} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(wsA, "cloned"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	source := filepath.Join(parent, "source-object") // a local clone's hard-linked object
	if err := os.WriteFile(source, []byte("object"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(source, filepath.Join(wsA, "object")); err != nil {
		t.Fatal(err)
	}
	a := newLocal(t, wsA, sandbox.Settings{IDs: ids, Tree: "tree-a"})
	b := newLocal(t, wsB, sandbox.Settings{IDs: ids, Tree: "tree-b", ReadOnly: []string{wsA}})
	uidA := owner(t, wsA)
	if uidA < sandbox.DefaultUIDFirst || uidA > sandbox.DefaultUIDLast || owner(t, filepath.Join(wsA, "cloned")) != uidA {
		t.Fatalf("workspace a owned by %d; want one uid of the range for it and its files", uidA)
	}
	if owner(t, source) != 0 {
		t.Fatal("a hard-linked file, reached from outside the workspace too, was given to the task")
	}
	if out, code := sh(t, a, `echo secret > private && chmod 600 private && cat cloned`); code != 0 || out != "x" {
		t.Fatalf("a: exit %d, %q", code, out)
	}
	if got := owner(t, filepath.Join(wsA, "private")); got != uidA {
		t.Fatalf("a command's file is owned by %d outside, want %d", got, uidA)
	}
	if err := a.WriteFile(context.Background(), "tool/made.txt", []byte("y")); err != nil {
		t.Fatal(err)
	}
	if owner(t, filepath.Join(wsA, "tool")) != uidA || owner(t, filepath.Join(wsA, "tool", "made.txt")) != uidA {
		t.Fatal("what the file tools make is not owned by the task's uid")
	}
	uidB := owner(t, wsB)
	if uidB == uidA || uidB < sandbox.DefaultUIDFirst {
		t.Fatalf("two trees got uids %d and %d; want two of the range", uidA, uidB)
	}
	if out, code := sh(t, b, "cat "+filepath.Join(wsA, "private")); code == 0 || strings.Contains(out, "secret") {
		t.Fatalf("tree b read tree a's private file: %q", out)
	}
	rootOnly := filepath.Join(wsB, "root-only")
	if err := os.WriteFile(rootOnly, []byte("topsecret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := sh(t, b, "cat root-only"); code == 0 || strings.Contains(out, "topsecret") {
		t.Fatalf("the sandbox read a root-only file: %q", out)
	}
	// A process of a, signalled by b's uid from outside (inside, b does
	// not even see a's processes: each sandbox has its own PID namespace).
	marker := fmt.Sprintf("agentfleet-uid-probe-%d", time.Now().UnixNano())
	p, err := a.StartProcess(context.Background(), execenv.ProcessRequest{Command: "exec -a " + marker + " sleep 60"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	var pid string
	testenv.Eventually(t, 10*time.Second, "a's process running", func() bool {
		out, _ := exec.Command("pgrep", "-f", "^"+marker).Output()
		pid = strings.TrimSpace(string(out))
		return pid != ""
	})
	kill := exec.Command("kill", "-0", pid)
	kill.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uidB), Gid: uint32(uidB), Groups: []uint32{}}}
	if out, err := kill.CombinedOutput(); err == nil {
		t.Fatalf("b's uid may signal a's process %s: %s", pid, out)
	}
}

// A subagent sharing its parent's tree shares its uid, which stays held
// until the last of them is cleaned up.
func TestATreeSharesItsUid(t *testing.T) {
	ids := sandbox.NewIDs(300000, 300002) // 300000 owns what tasks share
	u1, r1, _ := ids.Acquire("tree")
	u2, r2, _ := ids.Acquire("tree")
	u3, r3, _ := ids.Acquire("other")
	if u1 != u2 || u3 == u1 || u1 == ids.Shared() || u3 == ids.Shared() || ids.Shared() != 300000 {
		t.Fatalf("uids %d %d %d (shared %d); want the tree's twice and another, neither the shared one", u1, u2, u3, ids.Shared())
	}
	if _, _, err := ids.Acquire("third"); err == nil {
		t.Fatal("a third tree got a uid of a range of two")
	}
	r1()
	r1() // twice is once
	if _, _, err := ids.Acquire("third"); err == nil {
		t.Fatal("the tree's uid was released while a task of it still holds it")
	}
	r2()
	u4, r4, err := ids.Acquire("third")
	if err != nil || u4 != u1 {
		t.Fatalf("after the tree ended: %d, %v; want its uid %d back", u4, err, u1)
	}
	r3()
	r4()
}

// A fork bomb (bounded by a loop and timeout, in case the limit failed)
// stops at the process limit: the command fails saying so, the limit is
// reported, and the test (the worker) is fine.
func TestForkBombStopsAtTheProcessLimit(t *testing.T) {
	var hits []sandbox.LimitHit
	l := newLocal(t, testenv.SearchableTempDir(t), sandbox.Settings{Limits: sandbox.Limits{Pids: 64},
		OnLimit: func(h sandbox.LimitHit) { hits = append(hits, h) }})
	out, code := sh(t, l, `timeout 5 bash -c 'for i in $(seq 1 1000); do sleep 20 & done; wait'`)
	want := "agentfleet: the command hit the task's process limit (64)"
	if code == 0 || !strings.HasSuffix(out, want) || len(hits) != 1 || hits[0].Limit != sandbox.LimitPids {
		t.Fatalf("exit %d, hits %v, output ends %q; want a failure ending %q", code, hits, tail(out), want)
	}
	if out, code := sh(t, l, "echo still here"); code != 0 || out != "still here" {
		t.Fatalf("after the bomb: exit %d, %q", code, out)
	}
}

// A memory hog fails at the memory limit, saying so.
func TestMemoryHogStopsAtTheMemoryLimit(t *testing.T) {
	l := newLocal(t, testenv.SearchableTempDir(t), sandbox.Settings{Limits: sandbox.Limits{Memory: 256 << 20}})
	out, code := sh(t, l, `set -o pipefail; head -c 1G /dev/zero | tail | wc -c`)
	want := "agentfleet: the command hit the task's memory limit (256MiB)"
	if code == 0 && strings.TrimSpace(out) == "1073741824" || !strings.HasSuffix(out, want) {
		t.Fatalf("exit %d, output ends %q; want a failure ending %q", code, tail(out), want)
	}
}

// A cgroup per environment where the worker has a delegated cgroup v2.
func TestLimitsUseACgroupWhereDelegated(t *testing.T) {
	path, err := sandbox.LimitsEnforcement()
	if err != nil {
		// A machine property, not a missing service: no machine of this
		// project's (CI's included) has a delegated cgroup v2, so this
		// skips even when integration is required (docs/operations.md).
		t.Skipf("no delegated cgroup v2 here (limits are resource limits): %v", err)
	}
	l := newLocal(t, testenv.SearchableTempDir(t), sandbox.Settings{Limits: sandbox.Limits{Pids: 64, Memory: 256 << 20}})
	out, code := sh(t, l, `cat /proc/self/cgroup`)
	if code != 0 || !strings.Contains(out, "task-") {
		t.Fatalf("under %s: exit %d, %q; want a task cgroup", path, code, out)
	}
}

// tail is the end of out, for messages.
func tail(out string) string {
	if len(out) > 300 {
		return out[len(out)-300:]
	}
	return out
}

func owner(t *testing.T, path string) int {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return int(fi.Sys().(*syscall.Stat_t).Uid)
}

// A root worker's sandbox reaches a workspace, and an operator's
// read-only path, under a directory only root may search (t.TempDir is
// 0700): they are bound through portals, the workspace as it was opened.
func TestRootWorkerReachesWhatOnlyRootMaySearch(t *testing.T) {
	testenv.SkipUnlessRoot(t, "the worker is not root: its sandboxes run as its own uid")
	private := t.TempDir() // 0700, root's
	ws, cache := filepath.Join(private, "ws"), filepath.Join(private, "cache")
	for _, d := range []string{ws, cache} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(cache, "pkg"), []byte("cached"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := sandbox.NewLocal(execenv.LocalConfig{WorkingDir: ws}, sandbox.Settings{ReadOnly: []string{cache}})
	if err != nil && strings.Contains(err.Error(), "not searchable") {
		testenv.SkipOrFatal(t, "this root worker cannot make mount namespaces (no CAP_SYS_ADMIN): "+err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Cleanup(context.Background()) })
	out, code := sh(t, l, "cat "+filepath.Join(cache, "pkg")+" && echo made > here && pwd")
	if code != 0 || out != "cached"+ws {
		t.Fatalf("exit %d, %q", code, out)
	}
	if uid := owner(t, filepath.Join(ws, "here")); uid < sandbox.DefaultUIDFirst {
		t.Fatalf("the command's file is owned by %d outside", uid)
	}
	if _, code := sh(t, l, "echo x > "+filepath.Join(cache, "pkg")); code == 0 {
		t.Fatal("a read-only path was written through its portal")
	}
}

// Tasks of different uids share a writable directory (a build cache):
// each sees it as its own through an idmapped mount, and on disk what
// they write belongs to the range's shared uid, not to root.
func TestRootWorkerTasksShareAWritableCache(t *testing.T) {
	testenv.SkipUnlessRoot(t, "the worker is not root: its sandboxes run as its own uid")
	ids := sandbox.NewIDs(sandbox.DefaultUIDFirst, sandbox.DefaultUIDLast)
	cache := t.TempDir()
	for i, tree := range []string{"a", "b"} {
		l := newLocal(t, testenv.SearchableTempDir(t), sandbox.Settings{IDs: ids, Tree: tree, Writable: []string{cache}})
		out, code := sh(t, l, fmt.Sprintf("mkdir -p %[1]s/00 && echo %[2]s > %[1]s/00/entry-%[2]s && ls %[1]s/00 | wc -l", cache, tree))
		if code != 0 || out != fmt.Sprint(i+1) {
			t.Fatalf("tree %s: exit %d, %q", tree, code, out)
		}
	}
	for _, p := range []string{filepath.Join(cache, "00"), filepath.Join(cache, "00", "entry-b")} {
		if got := owner(t, p); got != ids.Shared() {
			t.Fatalf("%s is owned by %d on disk, want the shared uid %d", p, got, ids.Shared())
		}
	}
}
