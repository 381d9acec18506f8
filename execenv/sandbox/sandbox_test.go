package sandbox_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

// run runs script with sh under p and returns its combined output and
// whether it exited 0.
func run(t *testing.T, p sandbox.Policy, script string) (string, bool) {
	t.Helper()
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	argv, err := p.Command([]string{"sh", "-c", script})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	return strings.TrimSpace(string(out)), err == nil
}

// The workspace is writable and the working directory; the system is
// readable but not writable; /tmp and the home are private and writable.
func TestWorkspaceWritableSystemReadOnly(t *testing.T) {
	ws := testenv.SearchableTempDir(t)
	p := sandbox.Policy{Workspace: ws}
	if out, ok := run(t, p, `pwd && echo made > note.txt && echo t > /tmp/x && echo h > "$HOME/y" && cat /tmp/x "$HOME/y"`); !ok ||
		out != ws+"\nt\nh" {
		t.Fatalf("writing in the workspace, /tmp and home: ok %v, output %q", ok, out)
	}
	if data, err := os.ReadFile(filepath.Join(ws, "note.txt")); err != nil || string(data) != "made\n" {
		t.Fatalf("the workspace file outside the sandbox: %q, %v", data, err)
	}
	if out, ok := run(t, p, `ls /usr/bin/env >/dev/null && echo readable; touch /usr/bin/agentfleet-sandbox-test`); ok ||
		!strings.Contains(out, "readable") {
		t.Fatalf("the system must be readable and not writable: ok %v, output %q", ok, out)
	}
}

// Nothing of the host outside the workspace and the system is visible:
// not a sibling directory (another task's workspace), not /root, not the
// parts of /etc a worker's configuration could be in.
func TestOtherFilesAreHidden(t *testing.T) {
	parent := testenv.SearchableTempDir(t)
	ws, other := filepath.Join(parent, "task-a"), filepath.Join(parent, "task-b")
	for _, d := range []string{ws, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(other, "secret"), []byte("s3cr3t"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `for f in ` + filepath.Join(other, "secret") + ` /root /var/lib /etc/apt /run; do
		if [ -e "$f" ]; then echo "visible: $f"; fi; done; [ -e /etc/passwd ] && echo passwd`
	if out, ok := run(t, sandbox.Policy{Workspace: ws}, script); !ok || out != "passwd" {
		t.Fatalf("want only /etc/passwd visible, got ok %v, output %q", ok, out)
	}
}

// Without Network the command cannot reach even the host's loopback; with
// it, it can.
func TestNetworkOnlyWhenAllowed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hello\n"))
			_ = c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	// bash's /dev/tcp needs no network tools in the sandbox.
	script := `exec bash -c 'exec 3<>/dev/tcp/127.0.0.1/` + port + ` && head -1 <&3'`
	if out, ok := run(t, sandbox.Policy{Workspace: testenv.SearchableTempDir(t)}, script); ok || strings.Contains(out, "hello") {
		t.Fatalf("reached the host without network: ok %v, output %q", ok, out)
	}
	if out, ok := run(t, sandbox.Policy{Workspace: testenv.SearchableTempDir(t), Network: true}, script); !ok || out != "hello" {
		t.Fatalf("with network: ok %v, output %q", ok, out)
	}
}

// The command sees its own PID namespace and exactly the environment the
// policy gives (with HOME and TMPDIR), none of the caller's.
func TestOwnPIDsAndOnlyTheGivenEnvironment(t *testing.T) {
	t.Setenv("AGENTFLEET_TEST_SECRET", "leaked")
	p := sandbox.Policy{Workspace: testenv.SearchableTempDir(t), Env: []string{"PATH=/usr/bin:/bin", "GREETING=hi"}}
	out, ok := run(t, p, `echo "pid $$"; ls /proc | grep -c '^[0-9]'; env | sort`)
	if !ok {
		t.Fatalf("run: %s", out)
	}
	lines := strings.Split(out, "\n")
	if lines[0] != "pid 2" && lines[0] != "pid 1" {
		t.Fatalf("want a fresh PID namespace, got %q", lines[0])
	}
	if n, _ := strconv.Atoi(lines[1]); n > 4 {
		t.Fatalf("%d processes visible in /proc, want only the sandbox's", n)
	}
	env := strings.Join(lines[2:], "\n")
	for _, want := range []string{"GREETING=hi", "HOME=" + sandbox.Home, "TMPDIR=/tmp"} {
		if !strings.Contains(env, want) {
			t.Errorf("environment lacks %s:\n%s", want, env)
		}
	}
	if strings.Contains(env, "AGENTFLEET_TEST_SECRET") {
		t.Fatalf("the caller's environment leaked in:\n%s", env)
	}
}

// A policy that cannot be applied is refused before anything runs.
func TestBadPolicyIsRefused(t *testing.T) {
	for _, p := range []sandbox.Policy{
		{Workspace: "relative/dir"},
		{Workspace: filepath.Join(testenv.SearchableTempDir(t), "missing")},
		{Workspace: testenv.SearchableTempDir(t), ReadOnly: []string{"cache"}},
		{Workspace: testenv.SearchableTempDir(t), Env: []string{"NOEQUALS"}},
	} {
		if _, err := p.Command([]string{"true"}); err == nil {
			t.Errorf("policy %+v accepted", p)
		}
	}
	if _, err := (sandbox.Policy{Workspace: testenv.SearchableTempDir(t)}).Command(nil); err == nil {
		t.Error("an empty command accepted")
	}
}
