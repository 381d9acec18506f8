package worker

import (
	"errors"
	"fmt"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/llm"
)

// Prices that fail closed, at claim. The dispatcher refuses at submission
// a task whose cost is counted (limits.max_cost_usd, a budgeted label) on
// a model without a price, when it can tell the model; a spec without a
// model runs on this worker's providers.<profile>.default_model, which
// only the worker knows. So before a session starts, checkModels fails
// such a task with reason unpriced_model, through the completer
// (taskops.Failed), its result's error naming the model and the
// prices.<model> setting to add.
//
// Failed rather than held: a hold needs a release, and what releases this
// one is a configuration change on the workers (a restart), which nothing
// in the fleet observes; a held task would wait unseen. A failed task
// says what to do, and the same spec can be submitted again once the
// price is set.
//
// A model is priced when the price table (built-in, with Config.Prices)
// knows it, or when its provider's input_per_mtok or output_per_mtok
// gives a fallback price. The models checked are the session's, its
// summary model (context.summary_model, else the provider's) and the
// provider's fallback_model. Calls of an unpriced model that do run (no
// limit counts their cost) are counted in
// agentfleet_worker_unpriced_calls_total{model}.

// errUnpriced marks a task refused because a model it would call has no
// price while its cost is counted.
var errUnpriced = errors.New(fleet.ReasonUnpricedModel)

// checkModels refuses a context.summary_model outside allowed_models, as
// the session's model is refused (errNotAllowed), then a task whose cost
// is counted on a model without a price (errUnpriced). model is the
// session's model as resolved (spec, provider default, profile default).
func (r *run) checkModels(model string, pc ProviderConfig) error {
	w := r.w
	summary := r.spec.Context.SummaryModel
	if summary != "" && len(w.cfg.AllowedModels) > 0 && !slices.Contains(w.cfg.AllowedModels, summary) {
		return fmt.Errorf("%w: context.summary_model %q (allowed: %v)", errNotAllowed, summary, w.cfg.AllowedModels)
	}
	if summary == "" {
		summary = pc.SummaryModel
	}
	var missing []string
	for _, m := range []string{model, summary, pc.FallbackModel} {
		if m != "" && !w.priced(m, pc) && !slices.Contains(missing, m) {
			missing = append(missing, m)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	why := taskops.CostCounted(r.spec, w.budgeted)
	if bw := w.budgets.Load(); why == "" && bw != nil && bw.HasTenant(r.task.Tenant) {
		why = fmt.Sprintf("the budget of every task of tenant %s", r.task.Tenant)
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("%w: %s", errUnpriced, taskops.UnpricedDetail(missing, why))
}

// priced reports whether a call of model on the provider pc configures
// has a known cost.
func (w *Worker) priced(model string, pc ProviderConfig) bool {
	return w.prices.Known(model) || pc.InputPerMTok > 0 || pc.OutputPerMTok > 0
}

// budgeted reports whether label ("key=value") has a budget.
func (w *Worker) budgeted(label string) bool {
	bw := w.budgets.Load()
	return bw != nil && bw.Has(label)
}

// costOf prices one call of model, counting it in unpriced_calls_total
// when its cost is unknown (it then costs the zero fallback).
func (w *Worker) costOf(model string, pc ProviderConfig, u llm.Usage) float64 {
	if !w.priced(model, pc) {
		w.metrics.unpricedCalls.WithLabelValues(model).Inc()
	}
	return w.priceOf(model, pc).Cost(u)
}

func newUnpricedCalls(labels prometheus.Labels) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "agentfleet", Subsystem: "worker", Name: "unpriced_calls_total",
		Help:        "Model calls recorded whose model has no price (no prices.<model>, no provider fallback): their cost is unknown and counted as 0.",
		ConstLabels: labels}, []string{"model"})
}
