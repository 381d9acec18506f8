package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

// newLocal returns a sandboxed local environment on a fresh workspace.
func newLocal(t *testing.T, ws string, s sandbox.Settings) *sandbox.Local {
	t.Helper()
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	l, err := sandbox.NewLocal(execenv.LocalConfig{WorkingDir: ws}, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Cleanup(context.Background()) })
	if err := l.Initialize(context.Background()); err != nil {
		t.Fatal(err)
	}
	return l
}

// sh runs script through the environment and returns its output
// (stdout then stderr) and exit code.
func sh(t *testing.T, env execenv.Environment, script string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := env.Exec(ctx, execenv.ExecRequest{Command: script, Timeout: 20 * time.Second})
	if err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	return strings.TrimSpace(res.Stdout + res.Stderr), res.ExitCode
}

// Through the local environment, a command works in its workspace (and a
// subdirectory of it) but reaches nothing of the worker: not its
// environment, not a sibling workspace, not a file outside.
func TestLocalCommandsAreConfined(t *testing.T) {
	t.Setenv("AGENTFLEET_WORKER_SECRET", "leaked")
	parent := testenv.SearchableTempDir(t)
	ws, other := filepath.Join(parent, "task-a"), filepath.Join(parent, "task-b")
	for _, d := range []string{filepath.Join(ws, "sub"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(other, "notes"), []byte("other task"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := newLocal(t, ws, sandbox.Settings{})
	ctx := context.Background()
	res, err := l.Exec(ctx, execenv.ExecRequest{Command: `pwd; echo "$GREETING"; echo x > made`, Dir: "sub",
		Env: map[string]string{"GREETING": "hi"}})
	if err != nil || res.ExitCode != 0 || res.Stdout != filepath.Join(ws, "sub")+"\nhi\n" {
		t.Fatalf("a command in a subdirectory: %+v, %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "sub", "made")); err != nil {
		t.Fatalf("the command's file is not in the workspace: %v", err)
	}
	for _, script := range []string{
		`cat ` + filepath.Join(other, "notes"),
		`env | grep AGENTFLEET_WORKER_SECRET`,
		`echo x > /usr/agentfleet-outside`,
	} {
		if out, code := sh(t, l, script); code == 0 {
			t.Errorf("%q succeeded in the sandbox: %s", script, out)
		}
	}
	// The workspace's parent is in the sandbox's private /tmp: a write
	// there succeeds and lands nowhere on the host.
	sh(t, l, `echo x > `+filepath.Join(parent, "outside"))
	if _, err := os.Stat(filepath.Join(parent, "outside")); err == nil {
		t.Fatal("the sandbox wrote outside its workspace")
	}
}

// A sandbox that cannot start fails the command with bubblewrap's own
// message, and the command does not run.
func TestSandboxThatCannotStartRunsNothing(t *testing.T) {
	ws := testenv.SearchableTempDir(t)
	l := newLocal(t, ws, sandbox.Settings{ReadOnly: []string{filepath.Join(ws, "..", "absent-cache")}})
	out, code := sh(t, l, `touch ran`)
	if code == 0 || !strings.Contains(out, "bwrap:") {
		t.Fatalf("want bubblewrap's error, got exit %d: %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Fatal("the command ran although its sandbox did not start")
	}
}

// serve starts an HTTP server on the loopback answering name, and
// returns its port.
func serve(t *testing.T, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "hello from %s", name)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// viaProxy is a script that sends request to the proxy the sandbox's
// environment names, with bash alone, and prints the reply.
func viaProxy(request string) string {
	return `addr=${HTTP_PROXY#http://}; exec 3<>"/dev/tcp/${addr%:*}/${addr#*:}" || exit 1; ` +
		`printf '` + request + `' >&3; cat <&3`
}

// With an allowlist, the proxy is the only way out: a server named in it
// answers (plain HTTP and through CONNECT), one not named is refused, and
// connecting to the host directly fails.
func TestEgressAllowlist(t *testing.T) {
	named, unnamed := serve(t, "named"), serve(t, "unnamed")
	l := newLocal(t, testenv.SearchableTempDir(t), sandbox.Settings{Network: sandbox.NetworkAllowlist, AllowHosts: []string{"localhost:" + named},
		AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}})
	get := func(port string) string {
		return `GET http://localhost:` + port + `/ HTTP/1.0\r\nHost: localhost:` + port + `\r\n\r\n`
	}
	if out, code := sh(t, l, viaProxy(get(named))); code != 0 || !strings.Contains(out, "hello from named") {
		t.Fatalf("the named server through the proxy: exit %d: %s", code, out)
	}
	connect := `CONNECT localhost:` + named + ` HTTP/1.1\r\nHost: localhost:` + named + `\r\n\r\nGET / HTTP/1.0\r\n\r\n`
	if out, code := sh(t, l, viaProxy(connect)); code != 0 || !strings.Contains(out, "hello from named") {
		t.Fatalf("the named server through CONNECT: exit %d: %s", code, out)
	}
	out, _ := sh(t, l, viaProxy(get(unnamed)))
	if !strings.Contains(out, "403") || strings.Contains(out, "hello") {
		t.Fatalf("the server not named answered: %s", out)
	}
	out, code := sh(t, l, `exec 3<>/dev/tcp/127.0.0.1/`+named+` && echo connected`)
	if code == 0 || strings.Contains(out, "connected") {
		t.Fatalf("reached the host without the proxy: %s", out)
	}
	if out, _ := sh(t, l, `env | grep -i ^https_proxy=`); !strings.Contains(out, "127.0.0.1:3128") {
		t.Fatalf("the proxy variables are not set: %s", out)
	}
}

// With network off, nothing outside the sandbox is reachable, even a
// server on the host's loopback (where NATS and Postgres listen).
func TestNoNetworkReachesNothing(t *testing.T) {
	port := serve(t, "host")
	l := newLocal(t, testenv.SearchableTempDir(t), sandbox.Settings{})
	if out, code := sh(t, l, `exec 3<>/dev/tcp/127.0.0.1/`+port+` && echo connected`); code == 0 || strings.Contains(out, "connected") {
		t.Fatalf("reached the host's loopback: %s", out)
	}
	if out, _ := sh(t, l, `env | grep -i _proxy=`); out != "" {
		t.Fatalf("proxy variables without an allowlist: %s", out)
	}
}

// The sandbox's home and /tmp last from one command to the next (a build
// cache stays warm).
func TestHomeAndTmpLastForTheEnvironment(t *testing.T) {
	l := newLocal(t, testenv.SearchableTempDir(t), sandbox.Settings{})
	if out, code := sh(t, l, `echo kept > /tmp/note && mkdir -p ~/.cache && echo warm > ~/.cache/c`); code != 0 {
		t.Fatalf("writing: %s", out)
	}
	if out, code := sh(t, l, `cat /tmp/note ~/.cache/c; echo "$HOME"`); code != 0 || out != "kept\nwarm\n"+sandbox.Home {
		t.Fatalf("the next command: exit %d: %q", code, out)
	}
}

// The sandbox's home and /tmp are made before its first command, and
// removed by Cleanup: an environment that runs no command (a task that
// only answers) makes no directory at all.
func TestHomeAndTmpAreMadeForTheFirstCommand(t *testing.T) {
	tmp := testenv.SearchableTempDir(t)
	t.Setenv("TMPDIR", tmp)
	entries := func() int {
		t.Helper()
		des, err := os.ReadDir(tmp)
		if err != nil {
			t.Fatal(err)
		}
		return len(des)
	}
	idle := newLocal(t, testenv.SearchableTempDir(t), sandbox.Settings{})
	if n := entries(); n != 0 {
		t.Fatalf("an environment that ran nothing made %d entries in TMPDIR", n)
	}
	if err := idle.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	busy := newLocal(t, testenv.SearchableTempDir(t), sandbox.Settings{})
	if out, code := sh(t, busy, "true"); code != 0 {
		t.Fatalf("true: %s", out)
	}
	if n := entries(); n != 1 {
		t.Fatalf("after a command TMPDIR has %d entries, want the sandbox's directory", n)
	}
	if err := busy.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := entries(); n != 0 {
		t.Fatalf("after Cleanup TMPDIR has %d entries, want none", n)
	}
}

// SweepStale removes what a killed worker left (a sandbox directory no
// live sandbox holds) and never a live sandbox's directory, whichever
// process owns it.
func TestSweepStaleTakesOnlyLeftovers(t *testing.T) {
	tmp := testenv.SearchableTempDir(t)
	t.Setenv("TMPDIR", tmp)
	live := newLocal(t, testenv.SearchableTempDir(t), sandbox.Settings{})
	if out, code := sh(t, live, "echo kept > /tmp/note"); code != 0 {
		t.Fatalf("writing: %s", out)
	}
	left := filepath.Join(tmp, "agentfleet-sandbox-0123456789ab")
	if err := os.MkdirAll(filepath.Join(left, "home"), 0o700); err != nil {
		t.Fatal(err)
	}
	removed, err := sandbox.SweepStale()
	if err != nil || len(removed) != 1 || removed[0] != left {
		t.Fatalf("SweepStale removed %v, %v; want only the leftover %s", removed, err, left)
	}
	if out, code := sh(t, live, "cat /tmp/note"); code != 0 || out != "kept" {
		t.Fatalf("the live sandbox lost its /tmp: exit %d %q", code, out)
	}
}

// Settings that are not valid are refused before anything is made.
func TestBadSettingsAreRefused(t *testing.T) {
	for _, s := range []sandbox.Settings{
		{Network: "some"},
		{AllowHosts: []string{"example.com"}},
		{Network: sandbox.NetworkAllowlist, AllowHosts: []string{"http://example.com"}},
	} {
		if l, err := sandbox.NewLocal(execenv.LocalConfig{WorkingDir: testenv.SearchableTempDir(t)}, s); err == nil {
			_ = l.Cleanup(context.Background())
			t.Errorf("settings %+v accepted", s)
		}
	}
}

// A long-lived process (an MCP server on stdio) starts in the sandbox
// too: it talks over its stdin and stdout and sees what a command sees.
func TestProcessesRunInTheSandbox(t *testing.T) {
	l := newLocal(t, testenv.SearchableTempDir(t), sandbox.Settings{})
	starter, ok := sandbox.Scope(l).(execenv.ProcessStarter)
	if !ok {
		t.Fatal("the scoped environment cannot start processes")
	}
	ctx := context.Background()
	p, err := starter.StartProcess(ctx, execenv.ProcessRequest{Command: `read line; echo "$line; root: $(ls /root 2>&1 >/dev/null | wc -l); pid: $$"`})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = p.Close() }()
	if _, err := p.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(p)
	if err != nil || !strings.HasPrefix(string(out), "hello; root: 1; pid: ") || len(strings.TrimSpace(string(out))) > len("hello; root: 1; pid: 99") {
		t.Fatalf("process output %q, %v; want it to see no /root and a small pid of its own namespace", out, err)
	}
	if _, err := starter.StartProcess(ctx, execenv.ProcessRequest{Command: "true", Dir: "/etc"}); !errors.Is(err, execenv.ErrOutsideScope) {
		t.Fatalf("a process outside the workspace: %v", err)
	}
}
