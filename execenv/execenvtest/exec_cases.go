package execenvtest

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

func testExecBasics(t *testing.T, b *bundle) {
	res := b.exec(t, execenv.ExecRequest{Command: "echo out; echo err >&2; exit 3"})
	if res.Stdout != "out\n" || res.Stderr != "err\n" || res.ExitCode != 3 {
		t.Fatalf("got stdout %q stderr %q exit %d; want out, err, 3", res.Stdout, res.Stderr, res.ExitCode)
	}
	if res.TimedOut || res.Canceled || res.Duration <= 0 {
		t.Fatalf("flags/duration wrong: %+v", res)
	}
	if res := b.exec(t, execenv.ExecRequest{Command: "true"}); res.ExitCode != 0 || res.Stdout != "" {
		t.Fatalf("true: %+v", res)
	}
}

func testExecDirEnv(t *testing.T, b *bundle) {
	b.sh(t, "mkdir -p sub/dir")
	res := b.exec(t, execenv.ExecRequest{Command: `pwd; echo "$FOO"`, Dir: "sub/dir", Env: map[string]string{"FOO": "bar baz", "REQ_API_KEY": "x"}})
	want := path.Join(b.env.WorkingDir(), "sub/dir") + "\nbar baz\n"
	if res.Stdout != want {
		t.Fatalf("stdout %q, want %q (stderr %q)", res.Stdout, want, res.Stderr)
	}
	if out := b.sh(t, "pwd"); out != b.env.WorkingDir()+"\n" {
		t.Fatalf("default dir %q, want %q", out, b.env.WorkingDir())
	}
	res = b.exec(t, execenv.ExecRequest{Command: `echo "$REQ_API_KEY"`, Env: map[string]string{"REQ_API_KEY": "given"}})
	if res.Stdout != "given\n" {
		t.Fatalf("a variable set in the request must pass even with a secret-looking name, got %q", res.Stdout)
	}
}

func testExecMissingDir(t *testing.T, b *bundle) {
	if _, err := b.env.Exec(b.ctx, execenv.ExecRequest{Command: "true", Dir: "does/not/exist"}); err == nil {
		t.Fatal("Exec in a missing directory returned no error")
	}
}

func testEnvFiltering(t *testing.T, b *bundle) {
	res := b.exec(t, execenv.ExecRequest{Command: `echo "${AGENTFLEET_PROBE_PLAIN-unset}"; echo "${AGENTFLEET_PROBE_API_KEY-unset}"; echo "${agentfleet_probe_token-unset}"; echo "${PATH:+has-path}"`})
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	if len(lines) != 4 || lines[0] != "visible" {
		t.Fatalf("the base environment lacks execenvtest.ProbeEnv (got %q); the test must set it (t.Setenv for Local, sshtest.Options.SetEnv for SSH)", res.Stdout)
	}
	if lines[1] != "unset" || lines[2] != "unset" {
		t.Fatalf("secret variables reached the command: %q", res.Stdout)
	}
	if lines[3] != "has-path" {
		t.Fatalf("PATH was filtered out: %q", res.Stdout)
	}
}

func testInvalidUTF8(t *testing.T, b *bundle) {
	res := b.exec(t, execenv.ExecRequest{Command: `printf 'ok \377\376 end\n'; printf 'bad \377\n' >&2`})
	if !utf8.ValidString(res.Stdout) || !utf8.ValidString(res.Stderr) {
		t.Fatalf("output is not valid UTF-8: %q / %q", res.Stdout, res.Stderr)
	}
	if !strings.HasPrefix(res.Stdout, "ok ") || !strings.Contains(res.Stdout, "\uFFFD") || !strings.HasSuffix(res.Stdout, " end\n") {
		t.Fatalf("invalid bytes not replaced: %q", res.Stdout)
	}
}

// waitGone waits (inside one command, up to 30 s) until the process whose
// pid is in pidFile no longer runs; zombies count as gone.
func waitGone(t *testing.T, b *bundle, pidFile string) {
	t.Helper()
	script := fmt.Sprintf(`p=$(cat %s) || exit 2
for i in $(seq 300); do
  st=$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null)
  if [ -z "$st" ] || [ "$st" = Z ]; then echo gone; exit 0; fi
  sleep 0.1
done
echo "still running: $p $st"; exit 1`, pidFile)
	res := b.exec(t, execenv.ExecRequest{Command: script, Timeout: time.Minute})
	if res.ExitCode != 0 {
		t.Fatalf("a process of the command's group survived: %s %s", res.Stdout, res.Stderr)
	}
}

// execTimingOut runs a command that prints marker once it is set up and
// then runs past its timeout, first with a timeout of 1 s (see
// testenv.UntilStarted).
func execTimingOut(t *testing.T, b *bundle, command, marker string) (execenv.ExecResult, time.Duration) {
	t.Helper()
	var res execenv.ExecResult
	timeout := testenv.UntilStarted(t, time.Second, 20*time.Second, func(timeout time.Duration) bool {
		var mu sync.Mutex
		var seen strings.Builder
		res = b.exec(t, execenv.ExecRequest{Command: command, Timeout: timeout, OnOutput: func(_ execenv.OutputStream, c []byte) {
			mu.Lock()
			seen.Write(c)
			mu.Unlock()
		}})
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(seen.String(), marker)
	})
	return res, timeout
}

func testTimeoutKillsGroup(t *testing.T, b *bundle) {
	res, timeout := execTimingOut(t, b, "sleep 300 & echo $! > sleeper.pid; echo partial; wait", "partial")
	if !res.TimedOut || res.Canceled {
		t.Fatalf("TimedOut=%v Canceled=%v, want a timeout", res.TimedOut, res.Canceled)
	}
	if !strings.Contains(res.Stdout, "partial") {
		t.Fatalf("output before the timeout lost: %q", res.Stdout)
	}
	if !strings.HasSuffix(res.Stderr, execenv.TimeoutMessage(timeout)) {
		t.Fatalf("stderr %q does not end with the timeout message", res.Stderr)
	}
	waitGone(t, b, "sleeper.pid")
}

func testIgnoresSIGTERM(t *testing.T, b *bundle) {
	res, _ := execTimingOut(t, b, "trap '' TERM; echo $$ > stubborn.pid; echo ready; while :; do sleep 1; done", "ready")
	if !res.TimedOut || res.ExitCode != -1 {
		t.Fatalf("TimedOut=%v exit=%d, want a timeout ended by SIGKILL (-1)", res.TimedOut, res.ExitCode)
	}
	if res.Duration < execenv.KillGrace {
		t.Fatalf("returned after %v, before the %v grace period could pass", res.Duration, execenv.KillGrace)
	}
	waitGone(t, b, "stubborn.pid")
}

func testBackgroundLeftover(t *testing.T, b *bundle) {
	res := b.exec(t, execenv.ExecRequest{Command: "sleep 300 >/dev/null 2>&1 & echo $! > bg.pid; echo started", Timeout: 30 * time.Second})
	if res.TimedOut || res.ExitCode != 0 || res.Stdout != "started\n" {
		t.Fatalf("command with a background job: %+v", res)
	}
	waitGone(t, b, "bg.pid")
}

func testStreamingCancel(t *testing.T, b *bundle) {
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	var mu sync.Mutex
	var seen strings.Builder
	res, err := b.env.Exec(ctx, execenv.ExecRequest{
		Command: "echo ready; sleep 60",
		Timeout: 50 * time.Second,
		OnOutput: func(stream execenv.OutputStream, chunk []byte) {
			mu.Lock()
			defer mu.Unlock()
			if stream == execenv.Stdout {
				seen.Write(chunk)
			}
			if strings.Contains(seen.String(), "ready") {
				cancel()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Canceled || res.TimedOut {
		t.Fatalf("Canceled=%v TimedOut=%v: output was not streamed before the command ended", res.Canceled, res.TimedOut)
	}
	if res.Stdout != "ready\n" {
		t.Fatalf("stdout %q", res.Stdout)
	}
}

func testConcurrent(t *testing.T, b *bundle) {
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			res, err := b.env.Exec(b.ctx, execenv.ExecRequest{Command: fmt.Sprintf("echo %d", i), Timeout: time.Minute})
			if err != nil || res.Stdout != fmt.Sprintf("%d\n", i) {
				errs <- fmt.Errorf("command %d: %q, %v", i, res.Stdout, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func testLifecycle(t *testing.T, b *bundle) {
	if wd := b.env.WorkingDir(); !path.IsAbs(wd) {
		t.Fatalf("WorkingDir %q is not absolute", wd)
	}
	if b.env.Platform() != "linux" {
		t.Fatalf("Platform = %q, want linux", b.env.Platform())
	}
	if b.env.OSVersion() == "" {
		t.Fatal("OSVersion is empty")
	}
	d := b.env.Describe()
	if d.Kind == "" || d.WorkingDir != b.env.WorkingDir() {
		t.Fatalf("Describe = %+v", d)
	}
	if err := b.env.Cleanup(b.ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.env.Cleanup(b.ctx); err != nil {
		t.Fatalf("second Cleanup: %v", err)
	}
}
