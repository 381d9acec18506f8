package dispatcher

import (
	"context"
	"fmt"
	"net/http"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/internal/identity"
)

// assignTenants puts each spec of a submission in a tenant: the one it
// names, or else the principal's default tenant (fleet.DefaultTenant
// when it has none), and refuses with a 403 naming the tenant a spec
// whose tenant the principal may not submit to. Naming a tenant is not
// finding a task, so the refusal says which tenant and why.
func (a *handlers) assignTenants(w http.ResponseWriter, r *http.Request, specs []fleet.TaskSpec) bool {
	p := principal(r)
	for i := range specs {
		s := &specs[i]
		if s.Tenant == "" {
			s.Tenant = p.DefaultTenant
		}
		if s.Tenant == "" {
			s.Tenant = fleet.DefaultTenant
		}
		noteAudit(r, s.Tenant, "")
		if !p.Can(s.Tenant, identity.Submitter) {
			field := "tenant"
			if len(specs) > 1 {
				field = fmt.Sprintf("tasks[%d].tenant", i)
			}
			role := string(p.RoleIn(s.Tenant))
			if role == "" {
				role = "no role"
			}
			writeErr(w, http.StatusForbidden, api.ErrorDetail{Code: api.CodeForbidden, Field: field, Message: fmt.Sprintf(
				"%s may not submit to tenant %q: it has %s there, submitting needs submitter (its default tenant is %q)", p.ID, s.Tenant, role, p.DefaultTenant)})
			return false
		}
	}
	return true
}

// ownSubmissions refuses (409) a submission whose idempotency key is held
// by a task of a tenant the principal cannot see: keys are unique across
// the fleet, and answering with that task would show it.
func (a *handlers) ownSubmissions(w http.ResponseWriter, r *http.Request, subs []Submission) bool {
	p := principal(r)
	for _, s := range subs {
		if s.Existing && !p.Can(s.Task.Tenant, identity.Viewer) {
			writeErr(w, http.StatusConflict, api.ErrorDetail{Code: api.CodeConflict, Field: "idempotency_key", Message: fmt.Sprintf(
				"the idempotency key %q is held by another task; choose another key", s.Task.IdempotencyKey)})
			return false
		}
	}
	if len(subs) > 1 {
		noteAudit(r, "", fmt.Sprintf("%d tasks from %s", len(subs), subs[0].Task.ID))
	}
	return true
}

// submitter is the ID of the principal ctx carries ("" without one: a
// submission from inside the process).
func submitter(ctx context.Context) string {
	p, _ := identity.FromContext(ctx)
	return p.ID
}
