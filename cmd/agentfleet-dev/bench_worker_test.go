package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
	"github.com/agentfleet/agentfleet/fleet/bench"
	"github.com/agentfleet/agentfleet/store/pgtest"
)

// buildProgram builds this command into a temporary directory: the bench
// re-executes the running program, which in a test is the test binary.
func buildProgram(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agentfleet-dev")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build ./cmd/agentfleet-dev: %v\n%s", err, out)
	}
	return bin
}

// TestBenchWorkerProcesses runs `agentfleet-dev bench --worker-processes` as
// the built program on a real Postgres: every task succeeds, each worker
// process reports its peak RSS, the store writes include the workers', and
// the store server's CPU is reported when the server runs on this machine.
func TestBenchWorkerProcesses(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	bin := buildProgram(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const tasks = 20
	cmd := exec.CommandContext(ctx, bin, "bench", "--worker-processes", "--tasks", fmt.Sprint(tasks), "--workers", "2",
		"--rounds", "2", "--workspace-root", t.TempDir(), "--json")
	cmd.Env = append(os.Environ(), cli.EnvDatabaseURL+"="+dsn)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bench: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var rep bench.Report
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rep); err != nil {
		t.Fatalf("last line is not the JSON report: %v\n%s", err, stdout.String())
	}
	if rep.Mode != "worker-processes" || rep.Succeeded != tasks || rep.Failed != 0 {
		t.Fatalf("report %+v, want %d tasks succeeded in worker processes", rep, tasks)
	}
	if len(rep.WorkerPeakRSSMB) != 2 || rep.WorkerPeakRSSMB[0] <= 0 || rep.WorkerPeakRSSMB[1] <= 0 {
		t.Fatalf("worker peak RSS %v, want two figures > 0", rep.WorkerPeakRSSMB)
	}
	// The dispatcher here writes each task once; the workers at least claim
	// and finish each one.
	if rep.StoreWrites < 3*tasks {
		t.Fatalf("store writes %d, want >= %d: the worker processes' writes are missing", rep.StoreWrites, 3*tasks)
	}
	if !strings.Contains(stdout.String(), "worker RSS") {
		t.Fatalf("the text report lacks the worker RSS line:\n%s", stdout.String())
	}
	// The test server runs on this machine unless it is a container or a
	// server of its own: then the bench says why it does not report it.
	why := strings.Contains(stderr.String(), "not reporting the store's CPU")
	if measured := rep.StoreCPUSeconds > 0 && strings.Contains(stdout.String(), "in the store's server"); measured == why {
		t.Fatalf("store CPU %.3f s, reason given %v: want a figure or a reason, one of them\nstdout:\n%s\nstderr:\n%s",
			rep.StoreCPUSeconds, why, stdout.String(), stderr.String())
	}
	if why {
		t.Logf("the store's CPU is not reported here: %s", stderr.String())
	}
}

// TestBenchWorkerProcessesNeedsPostgres: without a shared Postgres store
// the mode is a usage error saying what to set.
func TestBenchWorkerProcessesNeedsPostgres(t *testing.T) {
	t.Setenv(cli.EnvDatabaseURL, "")
	var out bytes.Buffer
	code := execute(context.Background(), []string{"bench", "--worker-processes", "--tasks", "1"}, strings.NewReader(""), &out, &out)
	if code != 2 || !strings.Contains(out.String(), "postgres://") {
		t.Fatalf("exit %d, want 2 asking for a postgres:// URL:\n%s", code, out.String())
	}
}
