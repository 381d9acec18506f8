package dispatcher_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/store"
)

// TestForgeConcludeReleasesTree: a GitHub pull_request "closed" webhook
// (merged, then one closed unmerged) records the outcome on the task that
// opened the pull request and releases its tree's repository in the fleet
// git store, served by the same dispatcher, when no task of the tree is
// live; a tree with a live child keeps its repository until the child
// ends, and the sweep removes it then without waiting keep_after_end.
func TestForgeConcludeReleasesTree(t *testing.T) {
	needGit(t)
	t.Setenv("TEST_FORGE_SECRET", forgeSecret)
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true, SQLite: true})
	dir := t.TempDir()
	d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{Logger: slog.New(slog.DiscardHandler), ScheduleInterval: -1,
		GitStore: dispatcher.GitStoreConfig{Dir: dir, Key: storeKey, WorkerToken: storeCred},
		Forges:   map[string]dispatcher.ForgeConfig{"gh": {Kind: "github", SecretEnv: "TEST_FORGE_SECRET", Tenant: "team-a"}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{Token: "t0k"}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	body := outBundle(t)
	repo := func(tree uuid.UUID) string { return filepath.Join(dir, tree.String()+".git") }
	// pulled is a forge task whose tree pushed its files to the store.
	pulled := func() uuid.UUID {
		r, err := f.Store.CreateTask(ctx, store.CreateTaskParams{Queue: "default", Spec: []byte(`{"prompt":"p"}`),
			Labels: map[string]string{"forge": "gh", "forge_repo": "octo/hello"}})
		if err != nil {
			t.Fatal(err)
		}
		pushState(t, srv.URL, r.Task.ID, r.Task.ID, body)
		return r.Task.ID
	}
	deliver := func(id uuid.UUID, number string) {
		endTask(t, f.Store, id, store.TaskSucceeded, `{"success":true,"delivery":{"branch":"agentfleet/x","pushed":true,"request_number":`+number+`}}`)
	}
	closed := func(delivery string, number int, merged bool) {
		t.Helper()
		ev := map[string]any{"action": "closed", "number": number, "pull_request": map[string]any{"number": number, "merged": merged},
			"repository": map[string]any{"full_name": "octo/hello"}, "sender": map[string]any{"login": "maintainer"}}
		if code, out := postEvent(t, srv.URL+"/v1/forges/gh/events", "pull_request", delivery, ev, forgeSecret); code != http.StatusOK || out["action"] != "task.conclude" {
			t.Fatalf("pull request %d closed: %d %v", number, code, out)
		}
	}

	done := pulled()
	deliver(done, "7")
	busy := pulled()
	child, err := f.Store.CreateTask(ctx, store.CreateTaskParams{ParentID: busy, Queue: "default", Spec: []byte(`{"prompt":"c"}`)})
	if err != nil {
		t.Fatal(err)
	}
	deliver(busy, "8")
	other := pulled()
	deliver(other, "9") // its pull request stays open

	closed("d1", 7, true)
	if o, err := d.TaskOutcome(ctx, done); err != nil || o.Outcome != dispatcher.OutcomeMerged {
		t.Fatalf("outcome %+v, %v", o, err)
	}
	if exists(repo(done)) {
		t.Fatal("the merged tree's repository is still in the store")
	}
	closed("d2", 8, false)
	if o, err := d.TaskOutcome(ctx, busy); err != nil || o.Outcome != dispatcher.OutcomeClosed {
		t.Fatalf("outcome %+v, %v", o, err)
	}
	if !exists(repo(busy)) || !exists(repo(other)) {
		t.Fatal("a tree with a live task, or an open pull request, lost its repository")
	}

	endTask(t, f.Store, child.Task.ID, store.TaskSucceeded, `{"success":true}`)
	// The concluded tree's subagent takes no follow-up either.
	if _, err := d.Reopen(ctx, f.Task(child.Task.ID), "more"); !errors.Is(err, dispatcher.ErrTaskConcluded) {
		t.Fatalf("a follow-up of a concluded tree's subagent: %v, want ErrTaskConcluded", err)
	}
	if n, err := d.PruneGitStore(ctx, time.Now()); err != nil || n != 1 || exists(repo(busy)) || !exists(repo(other)) {
		t.Fatalf("the sweep after the child ended removed %d (%v): concluded tree's repository %v, open one's %v",
			n, err, exists(repo(busy)), exists(repo(other)))
	}
}
