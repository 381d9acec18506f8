package bench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/sqlite"
)

func benchSQLite(t *testing.T) (store.Store, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(dir, "bench.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st, dir
}

// TestSubmitOnly: --submit-only stores and enqueues every task, starts no
// worker (the tasks stay queued) and reports a rate.
func TestSubmitOnly(t *testing.T) {
	st, dir := benchSQLite(t)
	rep, err := Run(context.Background(), Config{Tasks: 250, Batch: 100, SubmitConcurrency: 2, SubmitOnly: true, Store: st, StoreName: "sqlite", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Mode != "submit-only" || rep.SubmitTasksPerS <= 0 || rep.Workers != 0 {
		t.Fatalf("report %+v", rep)
	}
	counts, err := st.CountTasks(context.Background(), store.CountTasksParams{})
	if err != nil {
		t.Fatal(err)
	}
	if counts[store.TaskQueued] != 250 || len(counts) != 1 {
		t.Fatalf("counts %v, want 250 queued tasks", counts)
	}
}

// TestStreamTokens: with streamed answers the report counts the events
// stored per task, and merging keeps them well below one per token.
func TestStreamTokens(t *testing.T) {
	st, dir := benchSQLite(t)
	const tokens = 300
	rep, err := Run(context.Background(), Config{Tasks: 2, Workers: 1, StreamTokens: tokens, TokenInterval: time.Millisecond,
		DeltaWindow: time.Hour, Store: st, StoreName: "sqlite", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Succeeded != 2 {
		t.Fatalf("report %+v", rep)
	}
	t.Logf("%.1f events, %.0f EVENTS bytes per task", rep.EventsPerTask, rep.EventBytesPerTask)
	// 300 tokens of 5 bytes merge into the first delta and 1 KB runs: 3 deltas, plus the other events.
	if rep.EventsPerTask < 3 || rep.EventsPerTask > 20 || rep.EventBytesPerTask <= 0 {
		t.Fatalf("%.1f events and %.0f bytes per task for %d streamed tokens", rep.EventsPerTask, rep.EventBytesPerTask, tokens)
	}
}

// TestPriorityRun: --priority submits the high tasks after the low ones,
// and they start first: their wait is a fraction of the low tasks', and
// few low tasks start while one of them is queued.
func TestPriorityRun(t *testing.T) {
	rep := twoClassRun(t, Config{Priority: true})
	p := rep.Priority
	if p == nil {
		t.Fatalf("report %+v", rep)
	}
	t.Logf("priority %+v", *p)
	if p.HighP50WaitMS >= p.LowP50WaitMS/2 || p.LowStartedAfterHigh > p.Slots+2 {
		t.Fatalf("high tasks did not go first: %+v", *p)
	}
	if p.LowStartedAfterHighStored < p.LowStartedAfterHigh {
		t.Fatalf("fewer low tasks started since a high one was stored than since it was queued, later: %+v", *p)
	}
}

// TestFairnessRun: --fairness submits tenant b's tasks after tenant a's
// backlog, and with equal weights they start beside it, not after it. b's
// median task starts about 20 starts after it was submitted (every other
// start is b's), a's about 150 (half of 300): b's wait is a fraction of
// a's (the tenth is for 2,000 of a's tasks), and while one of b's
// waits at most about as many of a's start as b's ahead of it.
func TestFairnessRun(t *testing.T) {
	rep := twoClassRun(t, Config{Fairness: true})
	fr := rep.Fairness
	if fr == nil || rep.Priority != nil {
		t.Fatalf("report %+v", rep)
	}
	t.Logf("fairness %+v", *fr)
	if fr.BP50WaitMS > fr.AP50WaitMS/4 || fr.AStartedAfterB > LateTasks+fr.Slots+2 {
		t.Fatalf("tenant b did not share the slots: %+v", *fr)
	}
}

// twoClassRun runs cfg's two-class bench with 300 tasks of the first
// class on one worker with two slots (a SQLite store), and checks that
// every task of both classes succeeded.
func twoClassRun(t *testing.T, cfg Config) Report {
	t.Helper()
	st, dir := benchSQLite(t)
	cfg.Tasks, cfg.Workers, cfg.Slots, cfg.Store, cfg.StoreName, cfg.Dir = 300, 1, 2, st, "sqlite", dir
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Succeeded != 300+LateTasks {
		t.Fatalf("report %+v: want %d succeeded", rep, 300+LateTasks)
	}
	return rep
}

// --prompt-bytes pads a prompt to exactly that many bytes and leaves the
// default prompt of a few words alone; a size out of range is refused
// with the flag named.
func TestPromptBytes(t *testing.T) {
	if got := benchPrompt(7, 0); got != "bench task 7" {
		t.Fatalf("default prompt %q", got)
	}
	if got := benchPrompt(7, 4000); len(got) != 4000 || !strings.HasPrefix(got, "bench task 7 Refactor the payment router") {
		t.Fatalf("padded prompt of %d bytes starting %.30q", len(got), got)
	}
	st, dir := benchSQLite(t)
	for _, n := range []int{-1, fleet.MaxPromptBytes + 1} {
		_, err := Run(context.Background(), Config{Tasks: 1, PromptBytes: n, Store: st, StoreName: "sqlite", Dir: dir})
		if err == nil || !strings.Contains(err.Error(), "--prompt-bytes") {
			t.Errorf("PromptBytes %d: %v, want an error naming --prompt-bytes", n, err)
		}
	}
}
