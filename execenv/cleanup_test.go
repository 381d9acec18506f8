package execenv_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

// testCleanupKillsRunning starts a long command, calls Cleanup once it runs,
// and checks that Exec returns and the process is gone (same machine).
func testCleanupKillsRunning(t *testing.T, env execenv.Environment, dir string) {
	ctx := testCtx(t)
	if err := env.Initialize(ctx); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var once sync.Once
	done := make(chan execenv.ExecResult, 1)
	go func() {
		res, _ := env.Exec(ctx, execenv.ExecRequest{
			Command: "echo $$ > long.pid; echo ready; sleep 300",
			Timeout: 5 * time.Minute,
			OnOutput: func(_ execenv.OutputStream, c []byte) {
				if strings.Contains(string(c), "ready") {
					once.Do(func() { close(started) })
				}
			},
		})
		done <- res
	}()
	select {
	case <-started:
	case <-time.After(60 * time.Second):
		t.Fatal("the command did not start")
	}
	if err := env.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case res := <-done:
		if res.ExitCode == 0 {
			t.Fatalf("the command finished normally: %+v", res)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Exec did not return after Cleanup")
	}
	data, err := os.ReadFile(filepath.Join(dir, "long.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	testenv.Eventually(t, 30*time.Second, fmt.Sprintf("process %d to exit after Cleanup", pid), func() bool { return !processRuns(pid) })
}

// processRuns reports whether pid is alive and not a zombie.
func processRuns(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return !strings.HasPrefix(rest, "Z")
}

func TestLocalCleanupKillsRunningCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	testCleanupKillsRunning(t, newLocal(t, execenv.LocalConfig{WorkingDir: dir}), dir)
}

func TestSSHCleanupKillsRunningCommands(t *testing.T) {
	t.Parallel()
	srv := startSSH(t)
	dir := t.TempDir()
	testCleanupKillsRunning(t, newSSH(t, srv.Config(dir)), dir)
}
