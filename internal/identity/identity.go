// Package identity is who a request acts as: the authenticated principal,
// the tenants it may act in and its role in each.
//
// Roles are ordered, each holding the rights of the ones before it:
// viewer reads tasks, turns, events and usage; submitter also submits,
// steers, follows up and cancels; approver also answers approvals; admin
// also manages budgets, tokens, bulk operations and webhooks. A grant for
// AllTenants ("*") applies in every tenant; an admin of AllTenants sees
// every tenant's data.
//
// The package holds no state. Each way of authenticating (API tokens,
// OpenID Connect, the bootstrap token) is an Authenticator; the
// dispatcher asks them in turn, stores the Principal one returns in the
// request's context with WithPrincipal, and every handler and every record
// of an actor reads it back with FromContext, never from a field of the
// request.
package identity

import (
	"context"
	"fmt"
	"net/http"
	"slices"
)

// Role is what a principal may do within a tenant.
type Role string

// The roles, from least to most.
const (
	Viewer    Role = "viewer"
	Submitter Role = "submitter"
	Approver  Role = "approver"
	Admin     Role = "admin"
)

// Roles lists the roles from least to most.
var Roles = []Role{Viewer, Submitter, Approver, Admin}

// AllTenants is the tenant of a grant that applies in every tenant.
const AllTenants = "*"

// ParseRole returns the role named s, or an error listing the roles.
func ParseRole(s string) (Role, error) {
	r := Role(s)
	if !slices.Contains(Roles, r) {
		return "", fmt.Errorf("role %q is unknown; want one of viewer, submitter, approver, admin", s)
	}
	return r, nil
}

// Includes reports whether r holds the rights of want.
func (r Role) Includes(want Role) bool {
	return slices.Index(Roles, r) >= slices.Index(Roles, want) && slices.Contains(Roles, r)
}

// Principal is an authenticated actor.
type Principal struct {
	// ID names the principal in records (the approver, the audit log):
	// "token:<id>", "oidc:<issuer-subject>" or "bootstrap".
	ID string `json:"id"`
	// Name is for people: a token's name, a user's e-mail or login.
	Name string `json:"name"`
	// Grants maps a tenant (or AllTenants) to the principal's role there.
	Grants map[string]Role `json:"grants"`
	// DefaultTenant is the tenant a submission naming none goes to.
	DefaultTenant string `json:"default_tenant"`
}

// RoleIn returns the principal's role in tenant: the higher of its grant
// there and its AllTenants grant; "" when it has neither.
func (p Principal) RoleIn(tenant string) Role {
	best := Role("")
	for _, r := range []Role{p.Grants[tenant], p.Grants[AllTenants]} {
		if r != "" && (best == "" || r.Includes(best)) {
			best = r
		}
	}
	return best
}

// Can reports whether the principal holds want (or more) in tenant.
func (p Principal) Can(tenant string, want Role) bool {
	r := p.RoleIn(tenant)
	return r != "" && r.Includes(want)
}

// Tenants returns the tenants the principal holds a grant in, sorted;
// all reports a grant in AllTenants (then the list names only the rest).
func (p Principal) Tenants() (tenants []string, all bool) {
	for t := range p.Grants {
		if t == AllTenants {
			all = true
			continue
		}
		tenants = append(tenants, t)
	}
	slices.Sort(tenants)
	return tenants, all
}

type contextKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, contextKey{}, p)
}

// FromContext returns the principal ctx carries, and whether it carries
// one.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(contextKey{}).(Principal)
	return p, ok
}

// Authenticator recognises one kind of credential on a request. ok is
// false when the request carries none of its kind (the next
// authenticator is asked); an error means a credential of its kind that
// is not valid (unknown, expired, revoked, badly signed), and the request
// is refused with 401 without asking the others.
type Authenticator interface {
	Authenticate(r *http.Request) (p Principal, ok bool, err error)
}
