package taskops

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentfleet/agentfleet/fleet"
)

// Prices that fail closed: a task whose cost is counted against something
// (its limits.max_cost_usd, or a label with a budget) must run on models
// whose price is known, or the limit never fires. The dispatcher refuses
// such a task at submission (400 naming the model) when it can tell the
// model; a worker, which alone knows its provider's default model, ends it
// at claim, failed with ReasonUnpricedModel. Both word the refusal with
// UnpricedDetail.

// CostCounted says why spec's cost must be counted: its cost limit, else
// the first of its labels (by key) for which budgeted reports a budget;
// "" when nothing counts it. budgeted may be nil (no budgets known).
func CostCounted(spec fleet.TaskSpec, budgeted func(label string) bool) string {
	if spec.Limits.MaxCostUSD > 0 {
		return fmt.Sprintf("its cost limit (limits.max_cost_usd %g)", spec.Limits.MaxCostUSD)
	}
	if budgeted == nil {
		return ""
	}
	for _, k := range slices.Sorted(maps.Keys(spec.Labels)) {
		if l := k + "=" + spec.Labels[k]; budgeted(l) {
			return fmt.Sprintf("the budget of its label %s", l)
		}
	}
	return ""
}

// UnpricedDetail is the refusal of a task whose models have no price while
// why (CostCounted) counts its cost: it names the models and what the
// operator sets.
func UnpricedDetail(models []string, why string) string {
	return fmt.Sprintf("no price is known for model %s, so its cost cannot be counted against %s: "+
		"set prices.%s (input_per_mtok, output_per_mtok, USD per million tokens) in the worker configuration "+
		"(and the dispatcher's, which checks submissions), or choose a priced model",
		strings.Join(models, ", "), why, models[0])
}
