package dispatcher

import (
	"net/http"
	"slices"

	"github.com/agentfleet/agentfleet/internal/identity"
)

// whoamiGrant is one tenant the caller may act in and its role there.
type whoamiGrant struct {
	Tenant string        `json:"tenant"` // "*": every tenant
	Role   identity.Role `json:"role"`
}

// whoamiResponse is GET /v1/whoami: who the request acts as.
type whoamiResponse struct {
	ID            string        `json:"id"`
	Name          string        `json:"name"`
	DefaultTenant string        `json:"default_tenant,omitempty"`
	Grants        []whoamiGrant `json:"grants"`
}

// sharedTokenPrincipal is who a request authenticated by the shared
// token, or served without authentication (no_auth), acts as: it may do
// everything, in every tenant.
var sharedTokenPrincipal = identity.Principal{ID: "token", Name: "shared token",
	Grants: map[string]identity.Role{identity.AllTenants: identity.Admin}}

// whoami answers who the request acts as: its principal's id, name,
// default tenant and role per tenant, so that a client (the dashboard)
// can show it and offer only what the role allows.
func (a *handlers) whoami(w http.ResponseWriter, r *http.Request) {
	p, ok := identity.FromContext(r.Context())
	if !ok {
		p = sharedTokenPrincipal
	}
	out := whoamiResponse{ID: p.ID, Name: p.Name, DefaultTenant: p.DefaultTenant, Grants: []whoamiGrant{}}
	for t, role := range p.Grants {
		out.Grants = append(out.Grants, whoamiGrant{Tenant: t, Role: role})
	}
	slices.SortFunc(out.Grants, func(x, y whoamiGrant) int {
		switch {
		case x.Tenant < y.Tenant:
			return -1
		case x.Tenant > y.Tenant:
			return 1
		}
		return 0
	})
	writeJSON(w, http.StatusOK, out)
}
