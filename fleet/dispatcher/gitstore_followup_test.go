package dispatcher_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/store"
)

// TestFollowUpAfterGitStorePruned: a local task whose subagent traveled
// through the fleet git store (served by the dispatcher, on loopback)
// ends; the sweep, a week later, removes its tree's repository; a
// follow-up through the API still runs: the worker finds no refs for the
// tree and starts the round from a fresh clone of the task's repository,
// where the round's command finds the repository's file and writes its
// own.
func TestFollowUpAfterGitStorePruned(t *testing.T) {
	needGit(t)
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true, SQLite: true})
	dir := t.TempDir()
	d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{Logger: slog.New(slog.DiscardHandler), ScheduleInterval: -1,
		Policy:   fleet.Policy{Repositories: fleet.Repositories{AllowLocal: []string{os.TempDir()}}},
		GitStore: dispatcher.GitStoreConfig{Dir: dir, Key: storeKey, WorkerToken: storeCred}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = d.Run(ctx) }()
	srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{Token: "t0k"}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); stop(); <-ran })
	for i := range 2 {
		c := f.WorkerConfig(i)
		c.GitStore.URL, c.GitStore.Token = srv.URL, storeCred
		c.OutboundAllowPrivate = []string{"127.0.0.0/8"}
		f.StartWorkerWith(c)
	}
	api, err := client.New(srv.URL, "t0k", nil)
	if err != nil {
		t.Fatal(err)
	}

	upstream := filepath.Join(t.TempDir(), "upstream")
	if err := os.MkdirAll(upstream, 0o755); err != nil {
		t.Fatal(err)
	}
	gitIn(t, upstream, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(upstream, "main.txt"), []byte("upstream\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn(t, upstream, "add", ".")
	gitIn(t, upstream, "commit", "-qm", "init")

	spec := fleettest.Spec("a subagent, then a follow-up",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Spawn("child", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo child > child.txt")}},
			fleettest.Step{Text: "child done"})}},
		fleettest.Step{Calls: []fleettest.Call{{Name: "wait", Args: map[string]any{"agent_id": "{{agent:0}}"}}}},
		fleettest.Step{Text: "round one: {{results}}"},
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("cat main.txt && echo round-two > two.txt && echo wrote-two")}},
		fleettest.Step{Text: "round two: {{last_user}}\n{{results}}"})
	spec.Environment = fleet.Environment{Kind: fleet.EnvLocal, Repo: upstream}
	sub, err := api.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	id := sub.Task.ID
	first := f.WaitDone(id)
	if first.State != store.TaskSucceeded {
		t.Fatalf("round 1: %s (%s)", first.State, first.Error)
	}
	repo := filepath.Join(dir, id.String()+".git")
	if !exists(repo) {
		t.Fatal("the subagent did not travel through the fleet git store: no repository for the tree")
	}
	if n, err := d.PruneGitStore(ctx, time.Now().Add(dispatcher.DefaultGitStoreKeep+time.Hour)); err != nil || n != 1 || exists(repo) {
		t.Fatalf("the sweep a week later removed %d (%v); the repository is still there: %v", n, err, exists(repo))
	}

	resp, err := api.FollowUp(ctx, id, "write two.txt")
	if err != nil || !resp.Reopened {
		t.Fatalf("follow-up: %+v, %v", resp, err)
	}
	second := f.WaitFor("round 2 to end", id, func(t store.Task) bool { return t.State.Terminal() && t.Attempts > first.Attempts })
	res := fleettest.Result(t, second)
	if second.State != store.TaskSucceeded || !strings.Contains(res.FinalText, "write two.txt") {
		t.Fatalf("round 2 after the repository was pruned: %s (%s): %q", second.State, second.Error, res.FinalText)
	}
	// Round 2 ran in a clone of upstream: main.txt was there.
	if !strings.Contains(res.FinalText, "upstream") || !strings.Contains(res.FinalText, "wrote-two") {
		t.Fatalf("round 2's tool results: %q", res.FinalText)
	}
}
