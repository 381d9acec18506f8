package worker_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// BenchmarkRepoStart measures what a task on a repository costs before
// its agent's first tool call, for N tasks (AGENTFLEET_BENCH_TASKS, 100)
// on one repository of M MB of incompressible files
// (AGENTFLEET_BENCH_REPO_MB, 50) served over http by git http-backend,
// with a setup that sleeps S seconds (AGENTFLEET_BENCH_SETUP_SECONDS, 3)
// and writes 5 MB, on one worker of 4 slots:
//
//   - cold: repo_cache.disabled, every task cloned from the source and
//     set up, as before mirrors;
//   - mirror: the mirror, but every task's setup text differs, so every
//     task runs its setup;
//   - warm: the mirror and one setup; the other tasks start from its
//     snapshot.
//
// It reports the time from a task's claim to its first tool call
// (p50, p90), the bytes the http server sent per task, a task's
// workspace on disk (du -sk, the first tool call) and the repository
// cache's size at the end. Run it with
//
//	go test -run '^$' -bench RepoStart -benchtime 1x ./fleet/worker/
func BenchmarkRepoStart(b *testing.B) {
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(b, err.Error())
	}
	tasks, mb, setup := envInt("AGENTFLEET_BENCH_TASKS", 100), envInt("AGENTFLEET_BENCH_REPO_MB", 50), envInt("AGENTFLEET_BENCH_SETUP_SECONDS", 3)
	src := benchRepo(b, mb)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	sent := serveGit(b, src, ln)
	url := "http://" + ln.Addr().String() + "/repo.git"
	for _, mode := range []string{"cold", "mirror", "warm"} {
		b.Run(mode, func(b *testing.B) {
			for range b.N {
				sent.Store(0)
				runRepoStart(b, mode, url, tasks, setup, sent)
			}
		})
	}
}

func runRepoStart(b *testing.B, mode, url string, tasks, setup int, sent *atomic.Int64) {
	cacheDir := filepath.Join(testenv.SearchableTempDir(b), "repos")
	opts := fleettest.Options{Workers: 1, Slots: 4, SQLite: true}
	opts.Queue.AckWait = time.Minute // a cold clone on a loaded machine outlasts fleettest's 2 s between heartbeats
	opts.Worker = func(_ int, c *worker.Config) {
		c.Sandbox = worker.SandboxOn
		c.Sessions = 4
		c.Policy.Repositories = fleet.Repositories{Allow: []string{strings.TrimSuffix(url, "/repo.git")}, AllowPrivate: []string{"127.0.0.1"}}
		c.RepoCache = worker.RepoCacheConfig{Dir: cacheDir, Disabled: mode == "cold"}
	}
	f := fleettest.Start(b, opts)
	ids := make([]uuid.UUID, tasks)
	start := time.Now()
	for i := range ids {
		s := fleettest.Spec("bench", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("du -sk . | cut -f1")}},
			fleettest.Step{Text: "{{results}}"})
		cmd := fmt.Sprintf("sleep %d && head -c 5000000 /dev/zero > .deps", setup)
		if mode == "mirror" {
			cmd += fmt.Sprintf(" # task %d", i)
		}
		s.Environment = fleet.Environment{Repo: url, Setup: cmd}
		ids[i] = f.Submit(s)
	}
	var waits []time.Duration
	var wsKB, retries int
	for _, id := range ids {
		task := waitLong(b, f, id)
		if task.State != store.TaskSucceeded {
			b.Fatalf("task %s: %s %s", id, task.State, task.Error)
		}
		res := fleettest.Result(b, task)
		retries += task.Attempts - 1
		first := firstToolCall(b, f, id)
		waits = append(waits, first.Sub(task.StartedAt))
		if n, err := strconv.Atoi(lastNumber(res.FinalText)); err == nil {
			wsKB = max(wsKB, n)
		}
	}
	total := time.Since(start)
	slices.Sort(waits)
	p50, p90 := waits[len(waits)/2], waits[len(waits)*9/10]
	cache := dirBytes(cacheDir)
	b.ReportMetric(float64(p50.Milliseconds()), "p50-ms-to-first-tool")
	b.ReportMetric(float64(p90.Milliseconds()), "p90-ms-to-first-tool")
	b.ReportMetric(float64(sent.Load())/float64(tasks)/1e6, "MB-fetched/task")
	b.ReportMetric(float64(wsKB)/1024, "MB-workspace")
	b.ReportMetric(float64(cache)/1e6, "MB-cache")
	b.Logf("%s: %d tasks in %s; claim to first tool call p50 %s, p90 %s; fetched %.1f MB in all; workspace %.1f MB; cache %.1f MB; setups run %d; claims beyond the first %d",
		mode, tasks, total.Round(time.Second), p50.Round(time.Millisecond), p90.Round(time.Millisecond), float64(sent.Load())/1e6,
		float64(wsKB)/1024, float64(cache)/1e6, worker.SetupRuns(f.Workers()[0].Worker), retries)
}

// waitLong waits for task id to end, for up to 30 minutes: a loaded
// machine runs N cold tasks slower than fleettest.Wait allows.
func waitLong(b *testing.B, f *fleettest.Fleet, id uuid.UUID) store.Task {
	var last store.Task
	testenv.EventuallyErr(b, 30*time.Minute, "task "+id.String()+" final", func() error {
		t, err := f.Store.GetTask(context.Background(), store.GetTaskParams{ID: id})
		if err != nil {
			return err
		}
		if last = t; !t.State.Terminal() {
			return fmt.Errorf("state %s", t.State)
		}
		return nil
	})
	return last
}

// firstToolCall is the time of task id's first TOOL_CALL_START event.
func firstToolCall(b *testing.B, f *fleettest.Fleet, id uuid.UUID) time.Time {
	ctx, cancel := context.WithTimeout(context.Background(), fleettest.Wait)
	defer cancel()
	sub, err := f.Queue.SubscribeEvents(ctx, queue.EventFilter{TaskID: id.String()}, queue.FromStart())
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Stop()
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			b.Fatalf("events of %s: %v", id, err)
		}
		if ev.Kind == string(agent.EventToolCallStart) {
			var data struct {
				Time time.Time `json:"time"`
			}
			if err := json.Unmarshal(ev.Data, &data); err != nil {
				b.Fatal(err)
			}
			return data.Time
		}
	}
}

// benchRepo makes a repository of mb files of 1 MB of random bytes.
func benchRepo(b *testing.B, mb int) string {
	dir := filepath.Join(b.TempDir(), "src")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	for i := range mb {
		_, _ = rand.Read(buf)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("blob%03d", i)), buf, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "."}, {"-c", "user.email=b@example.com", "-c", "user.name=b", "commit", "-q", "-m", "data"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			testenv.SkipOrFatal(b, fmt.Sprintf("git %v: %v %s", args, err, out))
		}
	}
	return dir
}

// serveGit serves a bare copy of src as /repo.git over http on ln,
// counting the bytes of its responses.
func serveGit(b *testing.B, src string, ln net.Listener) *atomic.Int64 {
	base := b.TempDir()
	if out, err := exec.Command("git", "clone", "-q", "--bare", src, filepath.Join(base, "repo.git")).CombinedOutput(); err != nil {
		b.Fatalf("%v %s", err, out)
	}
	execPath, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		b.Fatal(err)
	}
	backend := &cgi.Handler{Path: filepath.Join(strings.TrimSpace(string(execPath)), "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + base, "GIT_HTTP_EXPORT_ALL=1"}}
	var sent atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		backend.ServeHTTP(countingWriter{w, &sent}, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return &sent
}

type countingWriter struct {
	http.ResponseWriter
	n *atomic.Int64
}

func (c countingWriter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return c.ResponseWriter.Write(p)
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// lastNumber is the last line of s that is a number.
func lastNumber(s string) string {
	for _, f := range slices.Backward(strings.Fields(s)) {
		if _, err := strconv.Atoi(f); err == nil {
			return f
		}
	}
	return ""
}

// dirBytes is the disk used under dir (blocks, so reflinked or sparse
// files count once).
func dirBytes(dir string) int64 {
	out, err := exec.Command("du", "-sk", dir).Output()
	if err != nil {
		return 0
	}
	kb, _ := strconv.ParseInt(strings.Fields(string(out))[0], 10, 64)
	return kb * 1024
}
