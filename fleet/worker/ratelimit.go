package worker

import (
	"context"
	"fmt"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/fallback"
	"github.com/agentfleet/agentfleet/llm/ratelimit"
)

// The fleet-wide rate limits (llm/ratelimit) and the fallback model
// (llm/fallback) as the worker applies them. Run opens the shared limiter
// when Config.RateLimits has rules; the provider clients the worker builds
// send their HTTP requests through it (ratelimit.Lazy), each call marked
// with its key (provider, credential reference, model) by
// ratelimit.Client, which charges the answer's tokens; a wait is a metric
// and a RATE_LIMITED session event. The fallback model wraps that, so a
// call it redirects waits for the fallback model's limit.

// rateLimits is the worker's share of the fleet's rate limits.
type rateLimits struct {
	ratelimit.Lazy
	metrics *ratelimit.Metrics
}

// openRateLimits opens the shared limiter when rules are configured.
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
	w.rates.Set(lim)
	return nil
}

// credentialOf is the credential reference of a profile's provider.
func credentialOf(pc ProviderConfig) string {
	if pc.Credential != "" {
		return pc.Credential
	}
	return ratelimit.DefaultCredential
}

type notesKey struct{}

// withSessionNotes lets the model calls made under ctx report host events
// to the run's session.
func withSessionNotes(ctx context.Context, r *run) context.Context {
	return context.WithValue(ctx, notesKey{}, r)
}

// note reports a host event to the session of ctx's run, if any.
func note(ctx context.Context, kind agent.EventKind, text string) {
	if r, ok := ctx.Value(notesKey{}).(*run); ok {
		r.mu.Lock()
		sess := r.sess
		r.mu.Unlock()
		if sess != nil {
			sess.Notify(kind, text)
		}
	}
}

// wrap applies the fleet-wide rate limits to a profile's client (see
// ratelimit.Client); a wait is a RATE_LIMITED session event.
func (rl *rateLimits) wrap(c llm.Client, provider string, pc ProviderConfig) llm.Client {
	return &ratelimit.Client{Inner: c, Limiter: &rl.Lazy, Metrics: rl.metrics, Provider: provider, Credential: credentialOf(pc),
		Notify: func(ctx context.Context, text string) { note(ctx, agent.EventRateLimited, text) }}
}

// withFallback wraps a profile's client with its fallback model, if any;
// each switch is a MODEL_FALLBACK event of the session.
func withFallback(c llm.Client, pc ProviderConfig) llm.Client {
	if pc.FallbackModel == "" {
		return c
	}
	return &fallback.Client{Inner: c, Fallback: pc.FallbackModel, OnFallback: func(ctx context.Context, from, to string, cause error) {
		why := "it was overloaded a moment ago"
		if cause != nil {
			why = "it answered: " + cause.Error()
		}
		note(ctx, agent.EventModelFallback, fmt.Sprintf("%s answered instead of %s: %s", to, from, why))
	}}
}
