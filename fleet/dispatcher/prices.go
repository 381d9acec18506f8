package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/budget"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/llm/pricing"
	"github.com/agentfleet/agentfleet/profiles"
)

// Prices that fail closed, at submission. A task whose cost is counted
// (its limits.max_cost_usd, its own or the operator's default, or a label
// with a budget) and that names a model without a price in the
// dispatcher's table (llm/pricing's built-in one with Config.Prices on
// top) is refused with a 400 naming the model and the prices.<model>
// setting to add: its cost would count as $0 and the limit would never
// fire. The models checked are the spec's model, else its profile's
// default (profiles), and its context.summary_model. A spec without a
// model runs on the worker's providers.<profile>.default_model when the
// worker sets one, which the dispatcher cannot know: the worker checks it
// again at claim (taskops.CostCounted) and fails the task with
// fleet.ReasonUnpricedModel.

// checkPriced refuses s (a *fleet.FieldError) when its models have no
// price and its cost is counted; any other error means the budgets could
// not be read. Priced models cost no budget lookup.
func (d *Dispatcher) checkPriced(ctx context.Context, s fleet.TaskSpec) error {
	table := d.prices
	if table == nil {
		table = pricing.Builtin()
	}
	profile := s.Profile
	if profile == "" {
		profile = d.cfg.DefaultProfile
	}
	model, field := s.Model, "spec.model"
	if model == "" {
		model = profileDefaultModel(profile)
	}
	var missing []string
	if model != "" {
		missing = table.Unpriced(model)
	}
	if sm := s.Context.SummaryModel; sm != "" && !table.Known(sm) && !slices.Contains(missing, sm) {
		if len(missing) == 0 {
			field = "spec.context.summary_model"
		}
		missing = append(missing, sm)
	}
	if len(missing) == 0 {
		return nil
	}
	s = fleet.Defaults{Profile: d.cfg.DefaultProfile, Limits: d.cfg.DefaultLimits, Policy: d.cfg.Policy}.Apply(s)
	var lookupErr error
	why := taskops.CostCounted(s, func(label string) bool {
		has, err := d.hasBudget(ctx, s.Tenant, label)
		if err != nil && lookupErr == nil {
			lookupErr = err
		}
		return has
	})
	if why == "" && lookupErr == nil && s.Tenant != "" { // a budget of every task of its tenant
		has, err := d.hasBudget(ctx, s.Tenant, budget.AllTasks)
		if has {
			why = fmt.Sprintf("the budget of every task of tenant %s", s.Tenant)
		}
		lookupErr = err
	}
	if why == "" && lookupErr != nil {
		return fmt.Errorf("reading the budgets of the task's labels (its model %s has no price): %w", missing[0], lookupErr)
	}
	if why == "" {
		return nil
	}
	return &fleet.FieldError{Field: field, Reason: "refused: " + taskops.UnpricedDetail(missing, why)}
}

// hasBudget reports whether label ("key=value") has a budget, fleet-wide
// or in tenant.
func (d *Dispatcher) hasBudget(ctx context.Context, tenant, label string) (bool, error) {
	if d.queue == nil {
		return false, nil
	}
	book, err := d.budgetBook(ctx)
	if err != nil {
		return false, err
	}
	for _, t := range []string{"", tenant} {
		_, err = book.Get(ctx, t, label)
		if !errors.Is(err, budget.ErrNotFound) {
			return err == nil, err
		}
		if tenant == "" {
			break
		}
	}
	return false, nil
}

// defaultModels caches each profile's default model by profile name.
var defaultModels sync.Map

// profileDefaultModel is the model a profile runs when neither the spec
// nor the worker's provider configuration names one ("" for a profile
// profiles does not know).
func profileDefaultModel(profile string) string {
	if m, ok := defaultModels.Load(profile); ok {
		return m.(string)
	}
	p, err := profiles.ForProvider(profile, "")
	if err != nil {
		return ""
	}
	defaultModels.Store(profile, p.Model())
	return p.Model()
}
