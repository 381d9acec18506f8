package ratelimit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/ratelimit"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// TestTenantShares: with a key allowing 3 concurrent requests, acme's
// share of 1 and every other tenant's own share of 2 (tenant "*"), over
// the real bucket shared by two workers: acme's second request waits
// while beta's go on; once 3 are in flight the key's own limit holds a
// third tenant too; a call through Client carries its context's tenant.
func TestTenantShares(t *testing.T) {
	srv := sim.NewServer()
	defer srv.Close()
	srv.SetDefault(sim.Text("ok"))
	rules := ratelimit.Rules{
		{Provider: "anthropic", Limits: ratelimit.Limits{ConcurrentRequests: 3}},
		{Provider: "anthropic", Tenant: "acme", Limits: ratelimit.Limits{ConcurrentRequests: 1}},
		{Provider: "anthropic", Tenant: "*", Limits: ratelimit.Limits{ConcurrentRequests: 2}},
	}
	ws := startWorkers(t, 2, rules, srv)
	ctx := context.Background()
	of := func(tenant string) ratelimit.Key { k := key; k.Tenant = tenant; return k }
	blocked := func(w worker, tenant, why string) {
		t.Helper()
		short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer cancel()
		if p, err := w.lim.Acquire(short, of(tenant)); !errors.Is(err, context.DeadlineExceeded) {
			p.Release(ctx)
			t.Fatalf("%s: %v, want to wait past the deadline (%s)", tenant, err, why)
		}
	}
	acquire := func(w worker, tenant string) *ratelimit.Permit {
		t.Helper()
		short, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		p, err := w.lim.Acquire(short, of(tenant))
		if err != nil {
			t.Fatalf("%s: %v, want admitted", tenant, err)
		}
		return p
	}
	acme := acquire(ws[0], "acme")
	blocked(ws[1], "acme", "acme's share is 1")
	beta1, beta2 := acquire(ws[1], "beta"), acquire(ws[0], "beta")
	blocked(ws[0], "gamma", "the key's 3 are in flight, whatever gamma's share")

	// Through Client: the call's context names acme, whose share is taken.
	lazy := &ratelimit.Lazy{}
	lazy.Set(ws[1].lim)
	c := &ratelimit.Client{Inner: ws[1].client, Limiter: lazy, Provider: "anthropic", Credential: "default"}
	short, cancel := context.WithTimeout(ratelimit.WithTenant(ctx, "acme"), 500*time.Millisecond)
	defer cancel()
	if _, err := c.Complete(short, llm.Request{Model: key.Model, Messages: []llm.Message{llm.UserMessage("hi")}}); err == nil {
		t.Fatal("a call of acme's went through while acme's one request was in flight")
	}

	beta1.Release(ctx)
	acquire(ws[0], "gamma").Release(ctx) // the key has room again; gamma's share is its own
	acme.Release(ctx)
	if _, err := c.Complete(ratelimit.WithTenant(ctx, "acme"), llm.Request{Model: key.Model, Messages: []llm.Message{llm.UserMessage("hi")}}); err != nil {
		t.Fatalf("acme's call after its request ended: %v", err)
	}
	beta2.Release(ctx)
}

// TestTenantRulePrecedence: a rule naming the tenant wins over "*", a
// key without a tenant takes the rules without one only, and a tenant no
// rule shares is limited by the key alone.
func TestTenantRulePrecedence(t *testing.T) {
	rs := ratelimit.Rules{
		{Provider: "anthropic", Limits: ratelimit.Limits{RequestsPerMinute: 100}},
		{Provider: "anthropic", Tenant: "*", Limits: ratelimit.Limits{RequestsPerMinute: 20}},
		{Provider: "anthropic", Tenant: "acme", Limits: ratelimit.Limits{RequestsPerMinute: 10}},
		{Provider: "anthropic", Tenant: "acme", Model: key.Model, Limits: ratelimit.Limits{RequestsPerMinute: 5}},
	}
	for _, c := range []struct {
		k    ratelimit.Key
		want float64
	}{
		{key, 100},
		{ratelimit.Key{Provider: "anthropic", Credential: "default", Model: "other", Tenant: "acme"}, 10},
		{ratelimit.Key{Provider: "anthropic", Credential: "default", Model: key.Model, Tenant: "acme"}, 5},
		{ratelimit.Key{Provider: "anthropic", Credential: "default", Model: key.Model, Tenant: "beta"}, 20},
	} {
		if l, ok := rs.For(c.k); !ok || l.RequestsPerMinute != c.want {
			t.Errorf("For(%s) = %v, %v; want %v rpm", c.k, l.RequestsPerMinute, ok, c.want)
		}
	}
	if _, ok := rs[:1].For(ratelimit.Key{Provider: "anthropic", Credential: "default", Model: "m", Tenant: "acme"}); ok {
		t.Error("a tenant without a share rule has one")
	}
}
