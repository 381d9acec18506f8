package dispatcher

import (
	"context"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/llm/pricing"
	"github.com/agentfleet/agentfleet/store"
)

// Unpriced spend in GET /v1/usage. The store keeps each session's model,
// tokens and cost, not whether the cost was known; a session's spend is
// unpriced when its model has no price in the dispatcher's table
// (Config.Prices, meant to be the workers' prices) and it cost nothing
// for its tokens (a worker that priced it from its provider's
// input_per_mtok recorded a cost). The report lists those per model
// (UsageReport.Unpriced) and, grouped by model, marks their rows, so that
// spend whose cost is unknown never reads as $0.

// markUnpriced fills rep.Unpriced for the sessions p selects, reusing rows
// when they are grouped by model, and marks those rows.
func (d *Dispatcher) markUnpriced(ctx context.Context, p store.UsageParams, rows []store.UsageRow, rep *api.UsageReport) error {
	byModel := rows
	if p.GroupBy != store.GroupModel {
		q := p
		q.GroupBy, q.LabelKey = store.GroupModel, ""
		var err error
		if byModel, err = d.store.Usage(ctx, q); err != nil {
			return err
		}
	}
	rep.Unpriced = []api.UsageRow{}
	for _, r := range byModel {
		if d.unpricedSpend(r) {
			rep.Unpriced = append(rep.Unpriced, usageRow(r))
		}
	}
	if p.GroupBy == store.GroupModel {
		for i, r := range rows {
			rep.Rows[i].Unpriced = d.unpricedSpend(r)
		}
	}
	return nil
}

// unpricedSpend reports whether a model's row spent tokens at no known price.
func (d *Dispatcher) unpricedSpend(r store.UsageRow) bool {
	table := d.prices
	if table == nil {
		table = pricing.Builtin()
	}
	tokens := r.Usage.InputTokens + r.Usage.OutputTokens
	return tokens > 0 && r.CostUSD == 0 && !table.Known(r.Key)
}
