package worker

import (
	"context"
	"fmt"

	"github.com/agentfleet/agentfleet/llm/ratelimit"
)

// openRateLimits opens the fleet-wide rate limits (llm/ratelimit) when
// Config.RateLimits has rules; the model clients (package models) send
// their requests through them from then on.
func (w *Worker) openRateLimits(ctx context.Context) error {
	if len(w.cfg.RateLimits) == 0 {
		return nil
	}
	kv, err := w.q.KeyValue(ctx, "ratelimits", "agentfleet fleet-wide provider rate limits (llm/ratelimit)")
	if err != nil {
		return fmt.Errorf("rate_limits: %w", err)
	}
	lim, err := ratelimit.New(kv, w.cfg.RateLimits, w.cfg.ID)
	if err != nil {
		return err
	}
	w.limits.Set(lim)
	return nil
}
