// Package storetest is the conformance suite every store.Store driver
// passes: Exercise runs the same subtests against a driver, so
// TestStore/postgres/... and TestStore/sqlite/... check one contract.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// NewStore returns a fresh, empty, migrated store for one test and
// arranges for it to be closed when the test ends.
type NewStore func(t *testing.T) store.Store

// Exercise runs the conformance suite. Subtests run in parallel, each on its
// own store.
func Exercise(t *testing.T, newStore NewStore) {
	groups := []struct {
		name  string
		tests map[string]func(*testing.T, *bundle)
	}{
		{"Task", taskTests},
		{"Batch", batchTests},
		{"Transition", transitionTests},
		{"Reopen", reopenTests},
		{"Tree", treeTests},
		{"CancelledParent", cancelledParentTests},
		{"List", listTests},
		{"Session", sessionTests},
		{"Turn", turnTests},
		{"Fence", fenceTests},
		{"OneWrite", oneWriteTests},
		{"Blob", blobTests},
		{"BadInput", badInputTests},
		{"Race", raceTests},
		{"Usage", usageTests},
		{"Report", reportTests},
		{"Principals", principalTests},
		{"Retention", retentionTests},
		{"Schedules", scheduleTests},
		{"DelayedStarts", delayedTests},
		{"Search", searchTests},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for name, test := range g.tests {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					test(t, setup(t, newStore))
				})
			}
		})
	}
}

// bundle is what each subtest gets.
type bundle struct {
	s   store.Store
	ctx context.Context
}

func setup(t *testing.T, newStore NewStore) *bundle {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return &bundle{s: newStore(t), ctx: ctx}
}

// task creates a task with a small spec.
func (b *bundle) task(t *testing.T, p store.CreateTaskParams) store.Task {
	t.Helper()
	if p.Spec == nil {
		p.Spec = json.RawMessage(`{"prompt":"fix the flaky test"}`)
	}
	res, err := b.s.CreateTask(b.ctx, p)
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	return res.Task
}

// running creates a task and claims it for worker.
func (b *bundle) running(t *testing.T, p store.CreateTaskParams, worker string) store.Task {
	t.Helper()
	task := b.task(t, p)
	claimed, err := b.s.ClaimTask(b.ctx, store.ClaimTaskParams{ID: task.ID, WorkerID: worker})
	if err != nil {
		t.Fatalf("ClaimTask: %v", err)
	}
	return claimed
}

func (b *bundle) move(t *testing.T, id uuid.UUID, from, to store.TaskState) store.Task {
	t.Helper()
	task, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: id, From: from, To: to})
	if err != nil {
		t.Fatalf("TransitionTask %s -> %s: %v", from, to, err)
	}
	return task
}

func (b *bundle) get(t *testing.T, id uuid.UUID) store.Task {
	t.Helper()
	task, err := b.s.GetTask(b.ctx, store.GetTaskParams{ID: id})
	if err != nil {
		t.Fatalf("GetTask: %v", err)
	}
	return task
}

func (b *bundle) session(t *testing.T, task uuid.UUID) store.Session {
	t.Helper()
	s, err := b.s.CreateSession(b.ctx, store.CreateSessionParams{TaskID: task, Profile: "anthropic", Provider: "anthropic", Model: "m1"})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	return s
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("got error %v, want %v", err, target)
	}
}

// jsonEqual compares JSON documents by meaning (JSONB reorders keys).
func jsonEqual(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	if (got == nil) != (want == nil) {
		t.Fatalf("%s: got %s, want %s", what, got, want)
	}
	if want == nil {
		return
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: stored JSON does not parse: %v: %s", what, err, got)
	}
	_ = json.Unmarshal(want, &w)
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Fatalf("%s: got %s, want %s", what, got, want)
	}
}

func recent(t *testing.T, what string, ts time.Time) {
	t.Helper()
	if ts.IsZero() || time.Since(ts) > 10*time.Minute || time.Until(ts) > time.Minute {
		t.Fatalf("%s = %v, want about now", what, ts)
	}
	if ts.Location() != time.UTC {
		t.Fatalf("%s is in %v, want UTC", what, ts.Location())
	}
}

func ids(tasks []store.Task) []uuid.UUID {
	out := make([]uuid.UUID, len(tasks))
	for i, t := range tasks {
		out[i] = t.ID
	}
	return out
}
