package dev_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/internal/tracing"
	"github.com/agentfleet/agentfleet/internal/tracing/tracingtest"
	"github.com/agentfleet/agentfleet/store"
)

// TestSamplingKeepsFailedTasks: with a sample ratio of 0 a task that
// succeeds exports no span, and one that fails exports its worker spans
// (its claim, session, model and tool calls), marked sampled=false by
// GET /v1/tasks/{id}/trace: failed tasks are always traced.
func TestSamplingKeepsFailedTasks(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tracingtest.Install(t, exp, tracing.Options{Service: "agentfleet-dev", SampleRatio: 0})
	plan := dev.SimPlan{Tasks: []dev.SimTask{
		{Match: "sampling-pass", Steps: []dev.SimStep{{Text: "Done."}}},
		{Match: "sampling-fail", Steps: []dev.SimStep{
			{Text: "Looking first.", Calls: []dev.SimCall{{Name: "shell", Args: json.RawMessage(`{"command":"true"}`)}}},
			{Text: "The turn limit ends this before."},
		}},
	}}
	fl := startDev(t, dev.Config{Plan: plan})
	c, err := fl.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fail := fleet.TaskSpec{Prompt: "sampling-fail: one turn is not enough"}
	fail.Limits.MaxTurns = 1
	ids := map[string]store.TaskState{}
	for _, spec := range []fleet.TaskSpec{{Prompt: "sampling-pass: answer"}, fail} {
		sub, err := c.Submit(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		ids[sub.Task.ID.String()] = ""
	}
	testenv.Eventually(t, 2*time.Minute, "both tasks to end", func() bool {
		for id := range ids {
			v, err := c.Get(ctx, mustUUID(t, id))
			if err != nil || !v.State.Terminal() {
				return false
			}
			ids[id] = v.State
		}
		return true
	})
	traces := map[store.TaskState]string{}
	for id, state := range ids {
		tv, err := c.Trace(ctx, mustUUID(t, id))
		if err != nil || tv.TraceID == "" || tv.Sampled {
			t.Fatalf("task %s: trace %+v (%v), want an unsampled one", id, tv, err)
		}
		traces[state] = tv.TraceID
	}
	if len(traces) != 2 || traces[store.TaskFailed] == "" || traces[store.TaskSucceeded] == "" {
		t.Fatalf("the tasks ended %v, want one succeeded and one failed", ids)
	}
	// The failed task's spans are exported as its claim ends, just after
	// the task's end is stored.
	var names map[string]map[string]bool // trace id -> span names
	testenv.EventuallyErr(t, time.Minute, "the failed task's spans", func() error {
		names = map[string]map[string]bool{}
		for _, s := range exp.GetSpans() {
			tid := s.SpanContext.TraceID().String()
			if names[tid] == nil {
				names[tid] = map[string]bool{}
			}
			names[tid][s.Name] = true
		}
		got := names[traces[store.TaskFailed]]
		for _, want := range []string{tracing.SpanClaim, tracing.SpanSession, tracing.SpanTurn, "execute_tool shell"} {
			if !got[want] {
				return fmt.Errorf("the failed task's trace lacks %q: %v", want, got)
			}
		}
		if !anyPrefix(got, "chat ") {
			return fmt.Errorf("the failed task's trace lacks its model call: %v", got)
		}
		return nil
	})
	if got := names[traces[store.TaskSucceeded]]; len(got) != 0 {
		t.Errorf("the task that succeeded exported %v with a ratio of 0", got)
	}
}

func anyPrefix(m map[string]bool, p string) bool {
	for k := range m {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

func mustUUID(t *testing.T, s string) uuid.UUID {
	t.Helper()
	id, err := uuid.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
