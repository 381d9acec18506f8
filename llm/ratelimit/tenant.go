package ratelimit

import "context"

// Tenants: an operator may give each tenant a share of a provider key
// (Rule.Tenant). A request of a task of tenant T is then admitted only
// when both T's share (the rule naming T, else the rule for every tenant,
// "*", which gives each tenant a bucket of its own) and the key's own
// rule admit it; its tokens are charged to both. The provider's headers
// and 429s describe the key, not a share, so they adjust the key alone.
// A tenant without a share rule is limited by the key's rule only, as
// before tenants.

type tenantKey struct{}

// WithTenant marks the model calls made under ctx as tenant's (a task's
// tenant); Client puts it in each call's Key.
func WithTenant(ctx context.Context, tenant string) context.Context {
	return context.WithValue(ctx, tenantKey{}, tenant)
}

// TenantFrom returns the tenant WithTenant put in ctx, "" without one.
func TenantFrom(ctx context.Context) string {
	t, _ := ctx.Value(tenantKey{}).(string)
	return t
}

// keyOnly is k without its tenant: the provider key itself.
func (k Key) keyOnly() Key {
	k.Tenant = ""
	return k
}

// scopes are the keys a request of k is limited by: the tenant's share
// (when k has a tenant and a rule covers it) and the key itself (when a
// rule covers it).
func (l *Limiter) scopes(k Key) []Key {
	var out []Key
	if k.Tenant != "" {
		if _, ok := l.rules.For(k); ok {
			out = append(out, k)
		}
	}
	if _, ok := l.rules.For(k.keyOnly()); ok {
		out = append(out, k.keyOnly())
	}
	return out
}
