package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// TestSubmitRunAtAndRounds: submit --run-at 2h stores the task queued with
// its start two hours ahead and returns at once; a bad --run-at is a
// usage error; rounds lists the task's first round.
func TestSubmitRunAtAndRounds(t *testing.T) {
	fx := startDispatcher(t)
	if code, out := run(t, "submit", "x", "--profile", "openai", "--run-at", "tomorrow"); code != 2 || !strings.Contains(out, "--run-at") {
		t.Fatalf("a bad --run-at: %d %s", code, out)
	}
	before := time.Now()
	code, out := run(t, "submit", "fix every lint finding", "--profile", "openai", "--run-at", "2h")
	if code != 0 {
		t.Fatalf("submit --run-at: %d %s", code, out)
	}
	id, err := uuid.Parse(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("submit printed %q, want the task id", out)
	}
	task, err := fx.st.GetTask(context.Background(), store.GetTaskParams{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	spec, err := fleet.DecodeSpec(task.Spec)
	if err != nil || spec.RunAt == nil || spec.RunAt.Before(before.Add(2*time.Hour-time.Second)) || task.State != store.TaskQueued {
		t.Fatalf("stored %s with run_at %v (%v), want queued two hours ahead", task.State, spec.RunAt, err)
	}
	due, err := fx.st.DueDelayedStarts(context.Background(), spec.RunAt.Add(time.Second), 0)
	if err != nil || len(due) != 1 || due[0].TaskID != id {
		t.Fatalf("start times %+v, %v; want the task's", due, err)
	}
	if code, out := run(t, "rounds", id.String()); code != 0 || !strings.Contains(out, "round 1") || !strings.Contains(out, "api") {
		t.Fatalf("rounds: %d %s", code, out)
	}
}
