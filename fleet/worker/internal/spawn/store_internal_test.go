package spawn

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/internal/gitstore"
	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/sqlite"
)

// http1 is the test server's client.
var http1 http.Client

// storeWorkspace is dir as a workspace of task in a store served on
// loopback, unconfined.
func storeWorkspace(t *testing.T, srvURL string, tree, task uuid.UUID, dir string) Workspace {
	t.Helper()
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return Workspace{Env: env, Dir: dir, Tree: tree, Task: task,
		Git: &gitstore.Client{URL: srvURL, Credential: "cred", HTTP: &http1}}
}

// TestRestoreGivesBackUncommittedWork: a task's pushed state, restored
// into a fresh clone, has its HEAD, its changed and untracked files, and
// its index as it was (the changes not staged); a second restore leaves
// the workspace alone.
func TestRestoreGivesBackUncommittedWork(t *testing.T) {
	ctx := context.Background()
	up := t.TempDir()
	runGit(t, up, "init", "-q", "-b", "main")
	write(t, filepath.Join(up, "a.txt"), "a\n")
	runGit(t, up, "add", ".")
	runGit(t, up, "commit", "-qm", "one")

	st, err := sqlite.Open(ctx, sqlite.Config{Path: filepath.Join(t.TempDir(), "fleet.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	root, err := st.CreateTask(ctx, store.CreateTaskParams{Queue: "default", Spec: []byte(`{"prompt":"p"}`)})
	if err != nil {
		t.Fatal(err)
	}
	g, err := dispatcher.NewGitStore(dispatcher.GitStoreConfig{Dir: t.TempDir(), Key: "sixteen bytes or more", WorkerToken: "cred"}, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	http1 = *srv.Client()
	id := root.Task.ID

	first := filepath.Join(t.TempDir(), "first")
	runGit(t, filepath.Dir(first), "clone", "-q", up, first)
	runGit(t, first, "commit", "-q", "--allow-empty", "-m", "local commit")
	head := runGit(t, first, "rev-parse", "HEAD")
	write(t, filepath.Join(first, "a.txt"), "changed\n")
	write(t, filepath.Join(first, "new", "b.txt"), "untracked\n")
	ws := storeWorkspace(t, srv.URL, id, id, first)
	if _, err := ws.Push(ctx, "refs/agentfleet/state", "", "state", gitstore.StateRef(id)); err != nil {
		t.Fatal(err)
	}
	status := runGit(t, first, "status", "--porcelain")

	second := filepath.Join(t.TempDir(), "second")
	runGit(t, filepath.Dir(second), "clone", "-q", up, second)
	ws2 := storeWorkspace(t, srv.URL, id, id, second)
	loaded, err := Restore(ctx, ws2, "")
	if err != nil || loaded == "" {
		t.Fatalf("restore: %q, %v", loaded, err)
	}
	if got := runGit(t, second, "rev-parse", "HEAD"); got != head {
		t.Fatalf("HEAD %s, want the task's %s", got, head)
	}
	if got := runGit(t, second, "status", "--porcelain"); got != status {
		t.Fatalf("status after the restore:\n%s\nwant:\n%s", got, status)
	}
	if read(t, filepath.Join(second, "new", "b.txt")) != "untracked\n" || read(t, filepath.Join(second, "a.txt")) != "changed\n" {
		t.Fatal("the files were not restored")
	}
	write(t, filepath.Join(second, "c.txt"), "after\n")
	if again, err := Restore(ctx, ws2, ""); err != nil || again != "" {
		t.Fatalf("a second restore loaded %q (%v); the workspace is the task's already", again, err)
	}
	if _, err := os.Stat(filepath.Join(second, "c.txt")); err != nil {
		t.Fatalf("a second restore touched the files: %v", err)
	}
}
