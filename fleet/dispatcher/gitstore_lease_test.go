package dispatcher_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/internal/gitstore"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

const (
	storeKey  = "sixteen bytes or more"
	storeCred = "cred"
)

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testenv.SkipOrFatal(t, "git is not installed")
	}
}

// outBundle is a bundle of one commit as refs/agentfleet/out, as a
// worker pushes.
func outBundle(t *testing.T) []byte {
	t.Helper()
	src := t.TempDir()
	gitIn(t, src, "init", "-q")
	if err := os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, src, "add", ".")
	gitIn(t, src, "commit", "-qm", "one")
	gitIn(t, src, "update-ref", "refs/agentfleet/out", "HEAD")
	bundle := filepath.Join(t.TempDir(), "out.bundle")
	gitIn(t, src, "bundle", "create", "-q", bundle, "refs/agentfleet/out")
	body, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// pushState pushes body as task's state ref of tree through the store
// served at url, as a worker does.
func pushState(t *testing.T, url string, tree, task uuid.UUID, body []byte) {
	t.Helper()
	c := &gitstore.Client{URL: url, Credential: storeCred, HTTP: http.DefaultClient}
	if err := c.Push(context.Background(), tree, task, gitstore.StateRef(task), bytes.NewReader(body)); err != nil {
		t.Fatalf("push to tree %s: %v", tree, err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// endTask runs task id to its end on worker w1, with result.
func endTask(t *testing.T, st store.Store, id uuid.UUID, to store.TaskState, result string) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.ClaimTask(ctx, store.ClaimTaskParams{ID: id, WorkerID: "w1"}); err != nil {
		t.Fatal(err)
	}
	p := store.TransitionTaskParams{ID: id, From: store.TaskRunning, To: to, WorkerID: "w1"}
	if result != "" {
		p.Result = json.RawMessage(result)
	}
	if _, err := st.TransitionTask(ctx, p); err != nil {
		t.Fatal(err)
	}
}

// TestGitStorePrune: the sweep removes the repository of a tree whose
// last task ended longer ago than keep_after_end, and keeps a young one
// and one with a live task; a concluded tree goes as soon as no task is
// live; a repository of no known tree goes once it is old, and so do the
// leftovers of removals; what is not the store's stays. A push after the
// removal makes the repository again with only what it pushed; a fetch
// from a removed tree is a 404 that says why.
func TestGitStorePrune(t *testing.T) {
	t.Parallel()
	needGit(t)
	ctx := context.Background()
	st := fleettest.SQLiteStore(t)
	dir := t.TempDir()
	g, err := dispatcher.NewGitStore(dispatcher.GitStoreConfig{Dir: dir, Key: storeKey, WorkerToken: storeCred,
		KeepAfterEnd: time.Hour}, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	body := outBundle(t)
	newTree := func() uuid.UUID {
		r, err := st.CreateTask(ctx, store.CreateTaskParams{Queue: "default", Spec: []byte(`{"prompt":"p"}`)})
		if err != nil {
			t.Fatal(err)
		}
		pushState(t, srv.URL, r.Task.ID, r.Task.ID, body)
		return r.Task.ID
	}
	ended, live, concluded := newTree(), newTree(), newTree()
	endTask(t, st, ended, store.TaskSucceeded, `{"success":true}`)
	endTask(t, st, concluded, store.TaskSucceeded, `{"success":true}`)
	child, err := st.CreateTask(ctx, store.CreateTaskParams{ParentID: live, Queue: "default", Spec: []byte(`{"prompt":"c"}`)})
	if err != nil {
		t.Fatal(err)
	}
	endTask(t, st, live, store.TaskSucceeded, `{"success":true}`) // the root ended, its child is queued
	if _, err := st.PutArtifact(ctx, store.PutArtifactParams{TaskID: concluded, Kind: dispatcher.OutcomeKind,
		Name: dispatcher.OutcomeName, ContentType: "application/json", Content: []byte(`{"outcome":"merged"}`)}); err != nil {
		t.Fatal(err)
	}
	orphan := uuid.New()
	if err := os.Mkdir(filepath.Join(dir, orphan.String()+".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, orphan.String()+".git"), old, old); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{uuid.NewString() + ".git.gone-1234", "notes"} {
		if err := os.Mkdir(filepath.Join(dir, name), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	repo := func(tree uuid.UUID) string { return filepath.Join(dir, tree.String()+".git") }

	// Now: only the concluded tree, the old orphan and the leftover go.
	if n, err := g.Prune(ctx, time.Now()); err != nil || n != 2 {
		t.Fatalf("the first sweep removed %d (%v), want the concluded tree and the orphan", n, err)
	}
	for tree, want := range map[uuid.UUID]bool{ended: true, live: true, concluded: false, orphan: false} {
		if exists(repo(tree)) != want {
			t.Errorf("after the first sweep, the repository of tree %s exists: %v, want %v", tree, !want, want)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 3 || !exists(filepath.Join(dir, "notes")) {
		t.Errorf("the store's directory holds %v, want the two young trees and notes", left)
	}

	// Two hours on: the ended tree is old; the live one stays until its child ends.
	later := time.Now().Add(2 * time.Hour)
	if n, err := g.Prune(ctx, later); err != nil || n != 1 || exists(repo(ended)) || !exists(repo(live)) {
		t.Fatalf("the later sweep removed %d (%v); ended tree's repository: %v, live one's: %v",
			n, err, exists(repo(ended)), exists(repo(live)))
	}
	endTask(t, st, child.Task.ID, store.TaskFailed, "")
	if n, err := g.Prune(ctx, later); err != nil || n != 1 || exists(repo(live)) {
		t.Fatalf("once the child ended, the sweep removed %d (%v)", n, err)
	}

	// A fetch from a removed tree says so; a push makes it again, clean.
	c := &gitstore.Client{URL: srv.URL, Credential: storeCred, HTTP: srv.Client()}
	var out bytes.Buffer
	if err := c.Fetch(ctx, ended, ended, strings.Repeat("1", 40), "", &out); err == nil ||
		!strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "released") {
		t.Fatalf("a fetch from a removed tree: %v", err)
	}
	if exists(repo(ended)) {
		t.Fatal("a fetch made a repository for a removed tree")
	}
	pushState(t, srv.URL, ended, ended, body)
	refs, err := c.Refs(ctx, ended, ended)
	if err != nil || len(refs) != 1 || refs[gitstore.StateRef(ended)] == "" {
		t.Fatalf("refs of the tree made again: %v (%v)", refs, err)
	}
	if out, err := exec.Command("git", "--git-dir="+repo(ended), "fsck", "--no-progress", "--no-dangling").CombinedOutput(); err != nil {
		t.Errorf("fsck of the repository made again: %v: %s", err, out)
	}
}

// TestGitStoreKeepForEver: a negative keep_after_end keeps every
// repository, and Remove of a missing tree is no error.
func TestGitStoreKeepForEver(t *testing.T) {
	t.Parallel()
	needGit(t)
	ctx := context.Background()
	st := fleettest.SQLiteStore(t)
	dir := t.TempDir()
	g, err := dispatcher.NewGitStore(dispatcher.GitStoreConfig{Dir: dir, Key: storeKey, WorkerToken: storeCred,
		KeepAfterEnd: -1}, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	r, err := st.CreateTask(ctx, store.CreateTaskParams{Queue: "default", Spec: []byte(`{"prompt":"p"}`)})
	if err != nil {
		t.Fatal(err)
	}
	pushState(t, srv.URL, r.Task.ID, r.Task.ID, outBundle(t))
	endTask(t, st, r.Task.ID, store.TaskSucceeded, `{"success":true}`)
	if n, err := g.Prune(ctx, time.Now().Add(1000*time.Hour)); err != nil || n != 0 || !exists(filepath.Join(dir, r.Task.ID.String()+".git")) {
		t.Fatalf("a sweep with keep_after_end < 0 removed %d (%v)", n, err)
	}
	if ok, err := g.Remove(uuid.New()); ok || err != nil {
		t.Fatalf("removing a tree with no repository: %v, %v", ok, err)
	}
	if ok, err := g.Remove(r.Task.ID); !ok || err != nil || errors.Is(err, dispatcher.ErrRepoBusy) {
		t.Fatalf("removing a tree's repository: %v, %v", ok, err)
	}
}
