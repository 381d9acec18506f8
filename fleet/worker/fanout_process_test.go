package worker_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// processFleet is an in-process NATS, store, model and fleet git store
// (dispatcher.NewGitStore on loopback) with worker PROCESSES: the
// `worker` binary, each with its own workspace_root and repo_cache.dir
// and nothing on disk shared with the others.
type processFleet struct {
	*fleettest.Fleet
	logs map[string]*strings.Builder // each worker's stderr, by id
}

// startProcessFleet starts n `worker run` processes, w0..w(n-1), against
// a fleet with no in-process workers; worker i serves queues(i). It skips
// (or fails, under AGENTFLEET_REQUIRE_INTEGRATION) without Postgres,
// which processes need to share the store.
func startProcessFleet(t *testing.T, n int, queues func(i int) []string) *processFleet {
	t.Helper()
	needGit(t)
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true})
	if f.DSN == "" {
		testenv.SkipOrFatal(t, "worker processes need Postgres to share the store")
	}
	const cred = "workers-credential-for-the-test"
	g, err := dispatcher.NewGitStore(dispatcher.GitStoreConfig{Dir: t.TempDir(), Key: "a key of at least sixteen bytes",
		WorkerToken: cred}, f.Store, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(g.ServeHTTP))
	t.Cleanup(srv.Close)
	pf := &processFleet{Fleet: f, logs: map[string]*strings.Builder{}}
	bin := testenv.BuildCommand(t, "worker")
	for i := range n {
		id := fmt.Sprintf("w%d", i)
		pf.logs[id] = startWorkerProcess(t, bin, processConfig(t, f, id, srv.URL, cred, queues(i)), id)
	}
	return pf
}

// processConfig writes worker id's configuration: the fleettest timings,
// its own workspace root and repository cache, the git store, and a
// policy admitting repositories under the temporary directory.
func processConfig(t *testing.T, f *fleettest.Fleet, id, storeURL, cred string, queues []string) string {
	t.Helper()
	own := t.TempDir()
	q, _ := json.Marshal(queues)
	cfg := fmt.Sprintf(`
nats: {url: %q, ack_wait: 2s}
database_url: %q
listen: "127.0.0.1:0"
log_format: text
log_level: info
worker_id: %s
queues: %s
sessions: 2
workspace_root: %q
repo_cache: {dir: %q}
git_store: {url: %q, token: %q}
outbound_allow_private: ["127.0.0.0/8"]
sandbox: auto
heartbeat_interval: 200ms
stale_after: 1s
drain_grace: 5s
retry_backoff: 100ms
max_retry_backoff: 1s
policy:
  repositories: {allow_local: [%q]}
providers:
  anthropic: {api_key: test-key, base_url: %q, default_model: claude-test}
`, f.NATS.URL, f.DSN, id, q, filepath.Join(own, "ws"), filepath.Join(own, "repos"), storeURL, cred, os.TempDir(), f.Model.URL())
	path := filepath.Join(own, "worker.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startWorkerProcess runs `worker run --config path`, killed at cleanup;
// its stderr is returned, and logged when the test failed.
func startWorkerProcess(t *testing.T, bin, path, id string) *strings.Builder {
	t.Helper()
	cmd := exec.Command(bin, "run", "--config", path)
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
	return &logs
}

// TestFanOutAcrossWorkerProcesses: a task on worker A (process w0, which
// serves a queue the children do not use) spawns four children that edit
// different files; they run on B and C (processes w1, w2, each with its
// own workspace root and repository cache: no shared volume; the upstream
// repository is only cloned), each starting from the parent's uncommitted
// files carried by the fleet git store, and the parent's final diff holds
// all four changes; its check passes.
func TestFanOutAcrossWorkerProcesses(t *testing.T) {
	t.Parallel()
	f := startProcessFleet(t, 3, notOnA)
	spec := fleettest.Spec("fan out across worker processes", fourChildren("")...)
	spec.Environment = fleet.Environment{Kind: fleet.EnvLocal, Repo: upstream(t)}
	spec.Checks = []fleet.Check{allFourCheck}
	id := startOn(t, f.Fleet, spec, "w0")
	parent := f.WaitDone(id)
	res := succeeded(t, parent)
	if parent.WorkerID != "w0" {
		t.Fatalf("the parent ran on %q, want w0", parent.WorkerID)
	}
	if n := strings.Count(res.FinalText, "parent-edit"); n != 4 {
		t.Fatalf("want every child to see the parent's uncommitted edit, got %d:\n%s", n, res.FinalText)
	}
	if strings.Contains(res.FinalText, "CONFLICT") || strings.Count(res.FinalText, "merged into your working tree") != 4 {
		t.Fatalf("want four clean merges:\n%s", res.FinalText)
	}
	ran := map[string]int{}
	for _, c := range children(t, f.Fleet, id) {
		spec, err := fleet.DecodeSpec(c.Spec)
		if err != nil || spec.Environment.StoreBase == "" || spec.Environment.WorkingDir != "" {
			t.Fatalf("child %s does not travel: %s (%v)", c.ID, c.Spec, err)
		}
		if c.State != store.TaskSucceeded {
			t.Fatalf("child %s: %s %s", c.ID, c.State, c.Error)
		}
		ran[c.WorkerID]++
	}
	if ran["w0"] != 0 || ran["w1"]+ran["w2"] != 4 {
		t.Fatalf("children ran on %v; want all four on w1 and w2", ran)
	}
	diff := artifact(t, f.Fleet, id, "diff")
	for _, want := range []string{"+parent-edit", "+child-0", "+child-1", "+child-2", "+child-3"} {
		if !strings.Contains(diff, want) {
			t.Fatalf("the parent's diff lacks %q:\n%s", want, diff)
		}
	}
	if res.Checks == nil || res.Checks.Verdict != fleet.VerdictPassed {
		t.Fatalf("checks: %+v", res.Checks)
	}
}
