package worker_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/budget"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/llm/pricing"
	"github.com/agentfleet/agentfleet/store"
)

// TestUnpricedModelEndsAtClaim: the harness's worker runs specs without a
// model on its provider's default_model, claude-test, which has no price
// (a model only the worker knows, so the dispatcher could not refuse it).
// A task with a cost limit or a budgeted label on it fails before any
// model call with reason unpriced_model, its error naming the model and
// the setting to add; a task whose cost nothing counts runs, and each of
// its calls is counted in unpriced_calls_total{model}. (Before, all three
// ran with their cost counted as $0.)
func TestUnpricedModelEndsAtClaim(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, NoWorkers: true})
	ctx := waitCtx(t)
	book, err := budget.Open(ctx, f.Queue)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := book.Put(ctx, budget.Budget{Label: "team=web", LimitUSD: 100}); err != nil {
		t.Fatal(err)
	}
	w := f.StartWorker() // its budgets watch has read team=web's budget
	limited := fleettest.Spec("limited", fleettest.Step{Text: "never answered"})
	limited.Limits.MaxCostUSD = 1
	budgeted := fleettest.Spec("budgeted", fleettest.Step{Text: "never answered"})
	budgeted.Labels = map[string]string{"team": "web"}
	for _, c := range []struct {
		spec fleet.TaskSpec
		why  string
	}{{limited, "limits.max_cost_usd 1"}, {budgeted, "label team=web"}} {
		task := f.WaitDone(f.Submit(c.spec))
		res := fleettest.Result(t, task)
		if task.State != store.TaskFailed || task.Error != fleet.ReasonUnpricedModel || res.TurnsUsed != 0 {
			t.Fatalf("%s: task %s %q after %d turns; want failed with %s before any turn", c.why, task.State, task.Error, res.TurnsUsed, fleet.ReasonUnpricedModel)
		}
		for _, want := range []string{"claude-test", "prices.claude-test", c.why} {
			if !strings.Contains(res.Error, want) {
				t.Errorf("%s: the result's error %q does not say %q", c.why, res.Error, want)
			}
		}
	}
	if n := unpricedCalls(t, w.Gatherer(), "claude-test"); n != 0 {
		t.Fatalf("unpriced_calls_total{claude-test} = %v before any call ran", n)
	}
	free := fleettest.Spec("free", fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("true")}}, fleettest.Step{Text: "done"})
	free.Labels = map[string]string{"team": "mobile"}
	succeeded(t, f.WaitDone(f.Submit(free)))
	if n := unpricedCalls(t, w.Gatherer(), "claude-test"); n != 2 {
		t.Fatalf("unpriced_calls_total{claude-test} = %v, want 2 (the task's two model calls)", n)
	}
}

// TestPricedModelIsNotUnpriced: with the operator's price for the model,
// the cost-limited task runs and no call counts as unpriced; a provider's
// fallback price counts as a price too.
func TestPricedModelIsNotUnpriced(t *testing.T) {
	t.Parallel()
	for name, edit := range map[string]func(c *worker.Config){
		"prices": func(c *worker.Config) {
			c.Prices = map[string]pricing.Price{"claude-test": {InputPerMTok: 1, OutputPerMTok: 2}}
		},
		"provider fallback": func(c *worker.Config) {
			pc := c.Providers["anthropic"]
			pc.InputPerMTok = 1
			c.Providers["anthropic"] = pc
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true, Worker: func(_ int, c *worker.Config) { edit(c) }})
			spec := fleettest.Spec("limited", fleettest.Step{Text: "done"})
			spec.Limits.MaxCostUSD = 1
			succeeded(t, f.WaitDone(f.Submit(spec)))
			if n := unpricedCalls(t, f.Workers()[0].Gatherer(), "claude-test"); n != 0 {
				t.Fatalf("unpriced_calls_total{claude-test} = %v for a priced model", n)
			}
		})
	}
}

// TestSummaryModelWithinAllowedModels: context.summary_model is a model
// the task calls, so allowed_models bounds it as it bounds the session's
// model: a task naming another fails with not_allowed before it starts.
func TestSummaryModelWithinAllowedModels(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true,
		Worker: func(_ int, c *worker.Config) { c.AllowedModels = []string{"claude-test"} }})
	spec := fleettest.Spec("summary elsewhere", fleettest.Step{Text: "never answered"})
	spec.Context.SummaryModel = "claude-opus-4-5"
	task := f.WaitDone(f.Submit(spec))
	res := fleettest.Result(t, task)
	if task.State != store.TaskFailed || task.Error != fleet.ReasonNotAllowed || !strings.Contains(res.Error, "context.summary_model") ||
		!strings.Contains(res.Error, "claude-opus-4-5") {
		t.Fatalf("task %s %q (%s); want failed not_allowed naming context.summary_model", task.State, task.Error, res.Error)
	}
	succeeded(t, f.WaitDone(f.Submit(fleettest.Spec("allowed", fleettest.Step{Text: "done"}))))
}

// unpricedCalls reads agentfleet_worker_unpriced_calls_total{model}.
func unpricedCalls(t *testing.T, g prometheus.Gatherer, model string) float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != "agentfleet_worker_unpriced_calls_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "model" && l.GetValue() == model {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
