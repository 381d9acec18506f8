package dispatcher

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// ErrLimitSpent: the task's session has spent its limits.max_cost_usd or
// limits.max_tokens, which bound all its rounds together.
var ErrLimitSpent = fmt.Errorf("dispatcher: the task's limits are spent: %w", store.ErrConflict)

// limitsLeft refuses a reopening of t when its session has already spent
// l's cost or token limit (as the worker counts them: the session's cost,
// its input plus output tokens). The worker resumes the session with
// those totals and checks them after each model turn, so a round started
// past the limit would spend one more turn before failing again.
func (d *Dispatcher) limitsLeft(ctx context.Context, t store.Task, l fleet.Limits) error {
	if l.MaxCostUSD <= 0 && l.MaxTokens <= 0 {
		return nil
	}
	s, err := d.store.GetSession(ctx, store.GetSessionParams{ID: t.ID})
	if errors.Is(err, store.ErrNotFound) {
		return nil // no session yet: nothing spent
	} else if err != nil {
		return fmt.Errorf("reading the session of task %s: %w", t.ID, err)
	}
	tokens := s.Usage.InputTokens + s.Usage.OutputTokens
	switch l.Spent(tokens, s.CostUSD) {
	case fleet.SpentCost:
		return fmt.Errorf("%w: task %s has spent $%.2f, its limits.max_cost_usd is $%.2f; submit a new task to go on",
			ErrLimitSpent, t.ID, s.CostUSD, l.MaxCostUSD)
	case fleet.SpentTokens:
		return fmt.Errorf("%w: task %s has used %d tokens, its limits.max_tokens is %d; submit a new task to go on",
			ErrLimitSpent, t.ID, tokens, l.MaxTokens)
	}
	return nil
}
