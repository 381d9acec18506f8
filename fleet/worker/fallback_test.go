package worker_test

import (
	"context"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/store"
)

// TestFallbackModel: a profile with a fallback model answers an overloaded
// request with it; the assistant turn records the fallback as its model.
func TestFallbackModel(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true, Worker: func(_ int, c *worker.Config) {
		pc := c.Providers["anthropic"]
		pc.FallbackModel = "claude-fallback"
		c.Providers["anthropic"] = pc
	}})
	id := f.Submit(fleettest.Spec("busy", fleettest.Step{Fail: &sim.Failure{Kind: llm.ErrOverloaded}, FailTimes: 1, Text: "answered"}))
	done := f.WaitDone(id)
	if done.State != store.TaskSucceeded {
		t.Fatalf("task %s %s, want succeeded through the fallback", done.State, done.Error)
	}
	turns, err := worker.LoadHistory(context.Background(), f.Store, id)
	if err != nil {
		t.Fatal(err)
	}
	var models []string
	for _, tr := range turns {
		if tr.Kind == agent.TurnAssistant {
			models = append(models, tr.Model)
		}
	}
	if len(models) != 1 || models[0] != "claude-fallback" {
		t.Fatalf("assistant turns answered by %v, want [claude-fallback]", models)
	}
}
