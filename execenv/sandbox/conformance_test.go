package sandbox_test

import (
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/execenvtest"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

// The sandboxed, scoped local environment passes the conformance suite
// of every environment. The worker's environment does not reach a
// sandbox, so the plain probe variable comes as the operator's
// sandbox_env would bring it, and the secret ones not at all. A command
// that times out is killed at once, without execenv.KillGrace after a
// SIGTERM (bubblewrap does not pass SIGTERM on to the sandbox; see
// TestTimeoutKillsTheSandboxAtOnce).
func TestConformance(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, err.Error())
	}
	for k, v := range execenvtest.ProbeEnv {
		t.Setenv(k, v)
	}
	execenvtest.Exercise(t, func(t *testing.T, dir string) execenv.Environment {
		testenv.Searchable(t, dir)
		l, err := sandbox.NewLocal(execenv.LocalConfig{WorkingDir: dir},
			sandbox.Settings{Env: []string{"AGENTFLEET_PROBE_PLAIN=" + execenvtest.ProbeEnv["AGENTFLEET_PROBE_PLAIN"]}})
		if err != nil {
			t.Fatal(err)
		}
		return sandbox.Scope(l)
	}, "Exec/IgnoresSIGTERM")
}

// A sandboxed command that ignores SIGTERM and times out is killed at
// once, with everything it started.
func TestTimeoutKillsTheSandboxAtOnce(t *testing.T) {
	if _, err := exec.LookPath("pgrep"); err != nil {
		testenv.SkipOrFatal(t, "pgrep is not on PATH (Debian: procps)")
	}
	l := newLocal(t, testenv.SearchableTempDir(t), sandbox.Settings{})
	marker := fmt.Sprintf("agentfleet-sandbox-probe-%d", time.Now().UnixNano())
	res, err := l.Exec(context.Background(), execenv.ExecRequest{
		Command: "trap '' TERM; (exec -a " + marker + " sleep 300 &); while :; do sleep 1; done", Timeout: time.Second})
	if err != nil || !res.TimedOut || res.ExitCode != -1 {
		t.Fatalf("%+v, %v; want a timeout ended by a signal", res, err)
	}
	if res.Duration > time.Second+execenv.KillGrace {
		t.Fatalf("took %v", res.Duration)
	}
	testenv.Eventually(t, 10*time.Second, "the sandbox's background process gone", func() bool {
		return exec.Command("pgrep", "-f", marker).Run() != nil // exit 1: none found
	})
}
