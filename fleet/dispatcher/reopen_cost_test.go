package dispatcher_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/llm/pricing"
	"github.com/agentfleet/agentfleet/store"
)

// TestReopenedTaskCostLimitSpansRounds: limits.max_cost_usd bounds a
// task's rounds together, since a reopened task resumes its session with
// the cost it has spent. Each turn of the simulated model costs $1 here
// (100 input tokens at $10,000 per million). Round 1 spends $2 of a $2.50
// limit and succeeds; the follow-up's round 2 crosses the limit with its
// first turn ($3 in all) and the task fails with limit_max_cost, its
// session and result counting every round's cost, though round 2 alone
// spent $1. A follow-up of the task that spent its limit is refused.
func TestReopenedTaskCostLimitSpansRounds(t *testing.T) {
	f := fleettest.Start(t, fleettest.Options{SQLite: true, Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.Prices = map[string]pricing.Price{"claude-test": {InputPerMTok: 10_000}}
	}})
	d := clockDispatcher(t, f)
	ctx := context.Background()
	spec := fleettest.Spec("costly",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo one")}},
		fleettest.Step{Text: "round one done"},
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo two")}},
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo three")}},
		fleettest.Step{Text: "round two done"})
	spec.Limits.MaxCostUSD = 2.5
	id := f.Submit(spec)

	first := f.WaitDone(id)
	res1 := fleettest.Result(t, first)
	if first.State != store.TaskSucceeded || res1.CostUSD != 2 {
		t.Fatalf("round 1: %s %q at $%v, want succeeded at $2", first.State, first.Error, res1.CostUSD)
	}
	if round, err := d.Reopen(ctx, first, "and once more"); err != nil || round != 2 {
		t.Fatalf("reopening: round %d, %v", round, err)
	}
	second := f.WaitFor("round 2 to end", id, func(t store.Task) bool { return t.State.Terminal() && t.Attempts == 2 })
	res2 := fleettest.Result(t, second)
	if second.State != store.TaskFailed || second.Error != "limit_max_cost" || res2.Error != "limit_max_cost" {
		t.Fatalf("round 2: %s %q (result %q), want failed with limit_max_cost", second.State, second.Error, res2.Error)
	}
	if res2.CostUSD != 3 {
		t.Errorf("round 2's result counts $%v, want $3: both rounds", res2.CostUSD)
	}
	sess, err := f.Store.GetSession(ctx, store.GetSessionParams{ID: id})
	if err != nil || sess.CostUSD != 3 {
		t.Errorf("session cost $%v (%v), want $3", sess.CostUSD, err)
	}

	// The limit is spent: a follow-up is refused (409 through the API)
	// rather than run a round that would spend one more turn past it.
	srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{Token: "t0k"}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "t0k", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.FollowUp(ctx, id, "go on anyway")
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusConflict || !strings.Contains(ae.Message, "max_cost_usd") {
		t.Fatalf("a follow-up past the cost limit: %v, want 409 naming max_cost_usd", err)
	}
	if _, err := d.Reopen(ctx, second, "go on anyway"); !errors.Is(err, dispatcher.ErrLimitSpent) {
		t.Fatalf("Reopen past the cost limit: %v, want ErrLimitSpent", err)
	}
	if got := f.Task(id); got.State != store.TaskFailed || got.Attempts != 2 || len(inputs(t, f, id)) != 1 {
		t.Errorf("refused follow-ups left the task %s after %d attempts with inputs %q", got.State, got.Attempts, inputs(t, f, id))
	}
}
