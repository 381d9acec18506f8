package worker

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/fallback"
	"github.com/agentfleet/agentfleet/llm/ratelimit"
)

// The fleet-wide rate limits (llm/ratelimit) and the fallback model
// (llm/fallback) as the worker applies them.
//
// Rate limits:
// Run opens the shared limiter when Config.RateLimits has rules; every
// provider client built by the worker sends its HTTP requests through
// limitTransport, which uses the limiter once it is open; gatedClient
// marks each call with its key (provider, credential reference, model)
// and charges the answer's tokens; a wait is a metric and a RATE_LIMITED
// session event.

// rateLimits is the worker's share of the fleet's rate limits.
type rateLimits struct {
	lim     atomic.Pointer[ratelimit.Limiter]
	waits   *prometheus.CounterVec   // provider, model, reason
	waiting *prometheus.HistogramVec // provider, model
}

func newRateLimits(reg prometheus.Registerer, workerID string) (*rateLimits, error) {
	cl := prometheus.Labels{"worker": workerID}
	rl := &rateLimits{
		waits: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "agentfleet", Subsystem: "worker",
			Name: "llm_rate_limit_waits_total", ConstLabels: cl,
			Help: "Model requests that waited for a fleet-wide rate limit, by provider, model and the limit that held them."},
			[]string{"provider", "model", "reason"}),
		waiting: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "agentfleet", Subsystem: "worker",
			Name: "llm_rate_limit_wait_seconds", ConstLabels: cl, Buckets: prometheus.ExponentialBuckets(0.01, 3, 10),
			Help: "How long model requests waited for a fleet-wide rate limit."}, []string{"provider", "model"}),
	}
	for _, c := range []prometheus.Collector{rl.waits, rl.waiting} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return rl, nil
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
	w.rates.lim.Store(lim)
	return nil
}

// limitTransport sends requests through the limiter once it is open.
type limitTransport struct {
	rl   *rateLimits
	base http.RoundTripper
}

func (t limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if lim := t.rl.lim.Load(); lim != nil {
		return lim.Transport(t.base).RoundTrip(req)
	}
	return t.base.RoundTrip(req)
}

// httpClient is the HTTP client of the worker's provider clients.
func (rl *rateLimits) httpClient() *http.Client {
	return &http.Client{Transport: limitTransport{rl: rl, base: llm.DefaultTransport()}}
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

// limited marks a call with its rate-limit key, so its HTTP requests wait
// for the limit and a wait is counted and reported.
func (c *gatedClient) limited(ctx context.Context, model string) (context.Context, ratelimit.Key) {
	k := ratelimit.Key{Provider: c.provider, Credential: c.credential, Model: model}
	notify := func(waited time.Duration, reason string) {
		c.rates.waits.WithLabelValues(c.provider, model, reason).Inc()
		c.rates.waiting.WithLabelValues(c.provider, model).Observe(waited.Seconds())
		note(ctx, agent.EventRateLimited, fmt.Sprintf("waited %s for the fleet-wide rate limit of %s (%s)",
			waited.Round(time.Millisecond), k, reason))
	}
	return ratelimit.WithKey(ctx, k, notify), k
}

// charge takes a finished call's tokens from the shared token buckets.
func (c *gatedClient) charge(ctx context.Context, k ratelimit.Key, resp *llm.Response) {
	lim := c.rates.lim.Load()
	if lim == nil || resp == nil {
		return
	}
	if err := lim.Charge(context.WithoutCancel(ctx), k, resp.Usage); err != nil {
		c.rates.waits.WithLabelValues(c.provider, k.Model, "charge_failed").Inc()
	}
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
