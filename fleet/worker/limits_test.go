package worker_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/llm/pricing"
	"github.com/agentfleet/agentfleet/store"
)

// TestTaskLimits: the token, cost and wall-time limits of a spec each end
// the task failed with their own reason, after the turn that crossed them.
// Every turn of the simulated model uses 100 input and 20 output tokens,
// priced here at $1.
func TestTaskLimits(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 3, Worker: func(_ int, c *worker.Config) {
		c.Prices = map[string]pricing.Price{"claude-test": {InputPerMTok: 10_000}}
	}})
	steps := make([]fleettest.Step, 10)
	for i := range steps {
		steps[i] = fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo again")}}
	}
	submit := func(name string, lim fleet.Limits, steps ...fleettest.Step) store.Task {
		spec := fleettest.Spec(name, steps...)
		spec.Limits = lim
		return f.Task(f.Submit(spec))
	}
	tokens := submit("tokens", fleet.Limits{MaxTokens: 300}, steps...)
	cost := submit("cost", fleet.Limits{MaxCostUSD: 2.5}, steps...)
	wall := submit("wall", fleet.Limits{WallTime: fleet.Duration(300 * time.Millisecond)}, fleettest.Step{Gate: "never", Text: "late"})

	for _, c := range []struct {
		task          store.Task
		reason        string
		turns         int
		input         int
		cost          float64
		checkTotalsOK bool
	}{
		{task: tokens, reason: "limit_max_tokens", turns: 3, input: 300, cost: 3, checkTotalsOK: true},
		{task: cost, reason: "limit_max_cost", turns: 3, input: 300, cost: 3, checkTotalsOK: true},
		{task: wall, reason: "limit_wall_time"},
	} {
		done := f.WaitDone(c.task.ID)
		if done.State != store.TaskFailed || done.Error != c.reason {
			t.Errorf("%s: %s %q, want failed with %s", c.reason, done.State, done.Error, c.reason)
			continue
		}
		res := fleettest.Result(t, done)
		if res.Success || res.Error != c.reason {
			t.Errorf("%s: result %+v", c.reason, res)
		}
		if c.task.ID == cost.ID {
			rows, err := f.Store.LoadTurns(context.Background(), store.LoadTurnsParams{SessionID: cost.ID})
			if err != nil || len(rows) < 2 || rows[1].Kind != "assistant" || !strings.Contains(string(rows[1].Usage), `"cost_usd":1`) {
				t.Errorf("the first assistant turn's stored usage does not carry its cost: %v %+v", err, rows)
			}
		}
		if c.checkTotalsOK && (res.TurnsUsed != c.turns || res.Usage.InputTokens != c.input || res.CostUSD != c.cost) {
			t.Errorf("%s: %d turns, %d input tokens, $%v; want %d, %d, $%v", c.reason, res.TurnsUsed, res.Usage.InputTokens, res.CostUSD, c.turns, c.input, c.cost)
		}
	}
}
