package models

import (
	"context"
	"fmt"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/fallback"
	"github.com/agentfleet/agentfleet/llm/ratelimit"
)

// Notifier receives the host events of the model calls made for one
// session (agent.Session.Notify is one).
type Notifier func(kind agent.EventKind, text string)

type notifierKey struct{}

// WithNotifier lets the model calls made under ctx report rate-limit
// waits and fallbacks to n.
func WithNotifier(ctx context.Context, n Notifier) context.Context {
	return context.WithValue(ctx, notifierKey{}, n)
}

// note reports a host event to the notifier of ctx, if any.
func note(ctx context.Context, kind agent.EventKind, text string) {
	if n, ok := ctx.Value(notifierKey{}).(Notifier); ok && n != nil {
		n(kind, text)
	}
}

// credentialOf is the credential reference of a provider configuration.
func credentialOf(pc ProviderConfig) string {
	if pc.Credential != "" {
		return pc.Credential
	}
	return ratelimit.DefaultCredential
}

// withLimits applies the fleet-wide rate limits to a profile's client (see
// ratelimit.Client); a wait is a RATE_LIMITED session event.
func (p *Pool) withLimits(c llm.Client, provider string, pc ProviderConfig) llm.Client {
	return &ratelimit.Client{Inner: c, Limiter: p.cfg.Limits, Metrics: p.cfg.LimitMetrics, Provider: provider, Credential: credentialOf(pc),
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
