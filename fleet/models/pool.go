package models

import (
	"context"
	"errors"
	"iter"
	"net/http"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/provider"
	"github.com/agentfleet/agentfleet/llm/ratelimit"
)

// PoolConfig is what a Pool builds its clients from.
type PoolConfig struct {
	// Providers configures each profile's provider, keyed by profile.
	Providers map[string]ProviderConfig
	// Concurrency caps the concurrent calls to a provider (by name).
	Concurrency func(provider string) int
	// Retry is the retry policy of every client.
	Retry llm.RetryPolicy
	// NewClient builds a profile's client; nil means llm/provider.New,
	// sending its HTTP requests through Limits (see ratelimit.Lazy).
	NewClient func(profile string, pc ProviderConfig, retry llm.RetryPolicy) (llm.Client, error)
	// Limits are the fleet-wide rate limits (none until it is Set), and
	// LimitMetrics count their waits.
	Limits       *ratelimit.Lazy
	LimitMetrics *ratelimit.Metrics
	// Observe is told of every call, for metrics; nil means nothing.
	Observe func(provider, model string, d time.Duration, resp *llm.Response, err error)
}

// Pool holds one client per profile and provider choice, each behind its
// provider's gate. It is safe for concurrent use.
type Pool struct {
	cfg PoolConfig

	mu      sync.Mutex
	clients map[string]llm.Client
	gates   map[string]*gate
}

// NewPool returns a pool that builds its clients on first use.
func NewPool(cfg PoolConfig) *Pool {
	if cfg.Limits == nil {
		cfg.Limits = &ratelimit.Lazy{}
	}
	if cfg.NewClient == nil {
		hc := cfg.Limits.HTTPClient()
		cfg.NewClient = func(profile string, pc ProviderConfig, retry llm.RetryPolicy) (llm.Client, error) {
			return providerClient(profile, pc, retry, hc)
		}
	}
	if cfg.Observe == nil {
		cfg.Observe = func(string, string, time.Duration, *llm.Response, error) {}
	}
	return &Pool{cfg: cfg, clients: map[string]llm.Client{}, gates: map[string]*gate{}}
}

// providerClient builds a client with llm/provider from the configuration,
// sending its requests with hc (the fleet-wide rate limits' transport).
func providerClient(profile string, pc ProviderConfig, retry llm.RetryPolicy, hc *http.Client) (llm.Client, error) {
	return provider.New(provider.Config{Provider: pc.name(profile), BaseURL: pc.BaseURL, APIKey: pc.APIKey, Retry: retry, HTTPClient: hc,
		Region: pc.Region, Project: pc.Project, CredentialsFile: pc.CredentialsFile, Dialect: pc.Dialect, DialectOverrides: pc.DialectOverrides,
		AWSProfile: pc.AWSProfile, APIVersion: pc.APIVersion, AzureAuth: pc.AzureAuth})
}

// Client returns the gated client of a profile's provider choice ("" for
// the profile's own, see Select), building it once.
func (p *Pool) Client(profile, choice string) (llm.Client, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := profile + "/" + choice
	if c, ok := p.clients[key]; ok {
		return c, nil
	}
	pc, err := Select(p.cfg.Providers, profile, choice)
	if err != nil {
		return nil, err
	}
	inner, err := p.cfg.NewClient(profile, pc, p.cfg.Retry)
	if err != nil {
		return nil, err
	}
	name := pc.name(profile)
	inner = withFallback(p.withLimits(inner, name, pc), pc)
	g, ok := p.gates[name]
	if !ok {
		g = &gate{sem: make(chan struct{}, p.cfg.Concurrency(name))}
		p.gates[name] = g
	}
	c := &gatedClient{inner: inner, gate: g, provider: name, observe: p.cfg.Observe}
	p.clients[key] = c
	return c, nil
}

// gate bounds the concurrent calls to one provider and holds every call
// while the provider asked us to back off (Retry-After slows the whole
// worker, not just the session that got it).
type gate struct {
	sem chan struct{}

	mu    sync.Mutex
	until time.Time
}

func (g *gate) acquire(ctx context.Context) (func(), error) {
	g.mu.Lock()
	wait := time.Until(g.until)
	g.mu.Unlock()
	if wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	select {
	case g.sem <- struct{}{}:
		return func() { <-g.sem }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// observe pauses the gate after a rate limit with a retry-after.
func (g *gate) observe(err error) {
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.ErrRateLimited || le.RetryAfter <= 0 {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if u := time.Now().Add(le.RetryAfter); u.After(g.until) {
		g.until = u
	}
}

// gatedClient is an llm.Client behind a gate, with metrics.
type gatedClient struct {
	inner    llm.Client
	gate     *gate
	provider string
	observe  func(provider, model string, d time.Duration, resp *llm.Response, err error)
}

func (c *gatedClient) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	release, err := c.gate.acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	start := time.Now()
	resp, err := c.inner.Complete(ctx, req)
	c.done(req.Model, start, resp, err)
	return resp, err
}

func (c *gatedClient) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		release, err := c.gate.acquire(ctx)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		defer release()
		start := time.Now()
		var last *llm.Response
		var lastErr error
		for ev, err := range c.inner.Stream(ctx, req) {
			if err != nil {
				lastErr = err
			} else if ev.Response != nil {
				last = ev.Response
			}
			if !yield(ev, err) {
				break
			}
		}
		c.done(req.Model, start, last, lastErr)
	}
}

func (c *gatedClient) done(model string, start time.Time, resp *llm.Response, err error) {
	c.gate.observe(err)
	c.observe(c.provider, model, time.Since(start), resp, err)
}
