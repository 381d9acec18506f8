package worker_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/internal/testenv"

	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/store"
)

// workerProcess starts `worker run` as a subprocess against the fleet.
func workerProcess(t *testing.T, f *fleettest.Fleet, id string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cfg := fmt.Sprintf(`
nats: {url: %q, ack_wait: 2s}
database_url: %q
listen: "127.0.0.1:0"
log_format: text
log_level: debug
worker_id: %s
sessions: 2
workspace_root: %q
heartbeat_interval: 200ms
stale_after: 1s
drain_grace: 100ms
providers:
  anthropic: {api_key: test-key, base_url: %q, default_model: claude-test}
`, f.NATS.URL, f.DSN, id, filepath.Join(t.TempDir(), "ws"), f.Model.URL())
	path := filepath.Join(t.TempDir(), "worker.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testenv.BuildCommand(t, "worker"), "run", "--config", path)
	var logs strings.Builder
	cmd.Stderr = &syncWriter{b: &logs}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("worker %s log:\n%s", id, logs.String())
		}
	})
	return cmd, &logs
}

type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// TestKilledWorkerProcessResumes kills a worker process with SIGKILL in the
// middle of a session; another worker resumes it from its last recorded
// turn: the model is never asked for the earlier steps again and the stored
// turns have no repeat.
func TestKilledWorkerProcessResumes(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true})
	if f.DSN == "" {
		testenv.SkipOrFatal(t, "needs Postgres")
	}
	cmd, _ := workerProcess(t, f, "proc-kill")
	steps := []fleettest.Step{
		{Calls: []fleettest.Call{fleettest.Shell("echo round-one")}},
		{Calls: []fleettest.Call{fleettest.Shell("echo round-two")}},
		{Gate: "kill", Text: "finished: {{results}}"},
	}
	id := runningAtGate(t, f, "kill", steps...)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	f.Model.Open("kill")
	f.StartWorker()
	task := f.WaitDone(id)
	res := succeeded(t, task)
	prompt := fleettest.Prompt("kill", steps...)
	if f.Model.Requests(prompt, 0) != 1 || f.Model.Requests(prompt, 1) != 1 {
		t.Fatalf("steps 0 and 1 asked %d and %d times: the session started over",
			f.Model.Requests(prompt, 0), f.Model.Requests(prompt, 1))
	}
	if res.TurnsUsed != 3 || !strings.Contains(res.FinalText, "round-one") || !strings.Contains(res.FinalText, "round-two") {
		t.Fatalf("result %+v", res)
	}
	if task.WorkerID == "proc-kill" || task.Attempts != 2 {
		t.Fatalf("finished by %s after %d claims, want another worker on the second", task.WorkerID, task.Attempts)
	}
	turns, err := f.Store.LoadTurns(waitCtx(t), store.LoadTurnsParams{SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, tr := range turns {
		kinds = append(kinds, tr.Kind)
	}
	if got := strings.Join(kinds, ","); got != "user,assistant,tool_results,assistant,tool_results,assistant" {
		t.Fatalf("stored turns %s", got)
	}
}

// TestWorkerProcessDrainsOnSIGTERM: SIGTERM makes `worker run` hand its
// running session back and exit 0; another worker finishes the task.
func TestWorkerProcessDrainsOnSIGTERM(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true})
	if f.DSN == "" {
		testenv.SkipOrFatal(t, "needs Postgres")
	}
	cmd, logs := workerProcess(t, f, "proc-term")
	id := runningAtGate(t, f, "term", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo before")}},
		fleettest.Step{Gate: "term", Text: "after {{results}}"})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			t.Fatalf("worker exited %d after SIGTERM, want 0\n%s", ee.ExitCode(), logs.String())
		}
	case <-time.After(fleettest.Wait):
		t.Fatal("worker did not exit after SIGTERM")
	}
	if task := f.Task(id); task.State != store.TaskQueued {
		t.Fatalf("after the drain the task is %s, want queued", task.State)
	}
	f.Model.Open("term")
	f.StartWorker()
	if res := succeeded(t, f.WaitDone(id)); !strings.Contains(res.FinalText, "before") {
		t.Fatalf("result %+v", res)
	}
}
