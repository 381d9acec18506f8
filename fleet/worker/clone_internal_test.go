//go:build unix

// The clone tests check file owners (syscall.Stat_t) of clones made in
// the bubblewrap sandbox: Unix only.

package worker

import (
	"context"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/tasksandbox"
	"github.com/agentfleet/agentfleet/internal/gitsource"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

// cloneWorker is a worker with only what clone needs: its repository
// policy and a sandbox that must be on.
func cloneWorker(t *testing.T, repos fleet.Repositories) *Worker {
	t.Helper()
	if err := sandbox.Available(); err != nil {
		testenv.SkipOrFatal(t, "the clone sandbox needs bubblewrap: "+err.Error())
	}
	cfg := Config{Sandbox: SandboxOn, Policy: fleet.Policy{Repositories: repos}}
	log := slog.New(slog.DiscardHandler)
	return &Worker{cfg: cfg, log: log, sandbox: tasksandbox.Start(cfg.sandboxOperator(), log)}
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		testenv.SkipOrFatal(t, "git "+strings.Join(args, " ")+": "+err.Error()+": "+string(out))
	}
	return strings.TrimSpace(string(out))
}

// sourceRepo makes a repository of two commits under a fresh directory;
// it returns the directory and the first commit.
func sourceRepo(t *testing.T) (dir, first string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "src")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	runGit(t, dir, "init", "-q", "-b", "main")
	for _, v := range []string{"one", "two"} {
		if err := os.WriteFile(filepath.Join(dir, "README"), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		runGit(t, dir, "add", "README")
		runGit(t, dir, "commit", "-q", "-m", v)
		if first == "" {
			first = runGit(t, dir, "rev-parse", "HEAD")
		}
	}
	return dir, first
}

// owners are the uids owning the files of dir, .git's included.
func owners(t *testing.T, dir string) map[uint32]int {
	t.Helper()
	out := map[uint32]int{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[fi.Sys().(*syscall.Stat_t).Uid]++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLocalCloneInSandbox: a local repository is cloned inside the
// task's sandbox at the ref asked; on a root worker every file of the
// clone is the task tree's uid, the one the task's own commands then run
// as, never root's.
func TestLocalCloneInSandbox(t *testing.T) {
	src, first := sourceRepo(t)
	w := cloneWorker(t, fleet.Repositories{AllowLocal: []string{filepath.Dir(src)}})
	root, tree := t.TempDir(), uuid.NewString()
	release, err := w.sandbox.Hold(tree)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := w.clone(context.Background(), src, first, tree, root, "ws"); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "ws")
	if got := runGit(t, ws, "-c", "safe.directory=*", "rev-parse", "HEAD"); got != first {
		t.Fatalf("HEAD is %s, want the ref %s", got, first)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "README")); string(b) != "one\n" {
		t.Fatalf("README is %q, want the ref's", b)
	}
	if os.Geteuid() != 0 {
		return
	}
	cloned := owners(t, ws)
	if len(cloned) != 1 || cloned[0] > 0 {
		t.Fatalf("the clone's files belong to %v, want one uid, not root's", cloned)
	}
	// The task's environment for the same tree runs as that uid.
	f, err := os.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	env, _, err := w.sandbox.Env(execenv.LocalConfig{WorkingDir: ws, WorkingDirFile: f}, fleet.SandboxSpec{}, tree, w.log)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Cleanup(context.Background()) }()
	if res, err := env.Exec(context.Background(), execenv.ExecRequest{Command: "touch made-by-task"}); err != nil || res.ExitCode != 0 {
		t.Fatalf("touch: %v %+v", err, res)
	}
	task := owners(t, filepath.Join(ws, "made-by-task"))
	for uid := range cloned {
		if task[uid] != 1 {
			t.Fatalf("the task's file belongs to %v, the clone's to uid %d: want the same", task, uid)
		}
	}
}

// httpRepo serves a bare copy of src over plain http on listener ln with
// git http-backend, counting the requests it gets.
func httpRepo(t *testing.T, src string, ln net.Listener) *atomic.Int32 {
	t.Helper()
	base := t.TempDir()
	runGit(t, "", "clone", "-q", "--bare", src, filepath.Join(base, "repo.git"))
	execPath := runGit(t, "", "--exec-path")
	backend := &cgi.Handler{Path: filepath.Join(execPath, "git-http-backend"),
		Env: []string{"GIT_PROJECT_ROOT=" + base, "GIT_HTTP_EXPORT_ALL=1"}}
	var hits atomic.Int32
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		backend.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return &hits
}

// TestHTTPCloneThroughEgressProxy: an http repository on a loopback
// listener that policy.repositories allows (allow, allow_private) is
// cloned from inside the sandbox, whose only way out is the egress proxy:
// the listener gets git's requests and the clone has the ref. Without
// allow_private, the listener gets none.
func TestHTTPCloneThroughEgressProxy(t *testing.T) {
	src, first := sourceRepo(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hits := httpRepo(t, src, ln)
	url := "http://" + ln.Addr().String() + "/repo.git"
	allow := []string{"http://" + ln.Addr().String()}

	w := cloneWorker(t, fleet.Repositories{Allow: allow, AllowPrivate: []string{"127.0.0.1"}})
	root, tree := t.TempDir(), uuid.NewString()
	if err := w.clone(context.Background(), url, first, tree, root, "ws"); err != nil {
		t.Fatal(err)
	}
	if got := runGit(t, filepath.Join(root, "ws"), "-c", "safe.directory=*", "rev-parse", "HEAD"); got != first {
		t.Fatalf("HEAD is %s, want the ref %s", got, first)
	}
	if hits.Load() == 0 {
		t.Fatal("the clone succeeded but the listener got no request")
	}

	hits.Store(0)
	w = cloneWorker(t, fleet.Repositories{Allow: allow})
	err = w.clone(context.Background(), url, "", tree, root, "ws2")
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("clone without allow_private: %v, want refused for a loopback address", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the listener got %d requests without allow_private", n)
	}
}

// TestSandboxedCloneReachesOnlyThroughTheProxy: the sandbox's proxy
// checks the repository's address again when it dials. Here the worker's
// check is passed (allow_private names the listener) but the proxy is
// given no private address: git inside cannot reach the listener any
// other way, so it gets no request and the clone fails.
func TestSandboxedCloneReachesOnlyThroughTheProxy(t *testing.T) {
	src, _ := sourceRepo(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hits := httpRepo(t, src, ln)
	w := cloneWorker(t, fleet.Repositories{})
	s, err := gitsource.Parse("http://" + ln.Addr().String() + "/repo.git")
	if err != nil {
		t.Fatal(err)
	}
	rules, err := fleet.Repositories{Allow: []string{"http://" + ln.Addr().String()}}.Rules()
	if err != nil {
		t.Fatal(err)
	}
	done, err := w.cloneInSandbox(context.Background(), s, s.Raw, nil, uuid.NewString(), t.TempDir(), "ws", rules)
	if !done || err == nil {
		t.Fatalf("cloneInSandbox = %v, %v; want a failed clone", done, err)
	}
	if !strings.Contains(err.Error(), "502") && !strings.Contains(err.Error(), "loopback") {
		t.Errorf("the clone failed with %v, want the proxy's refusal", err)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the listener got %d requests past the proxy", n)
	}
}
