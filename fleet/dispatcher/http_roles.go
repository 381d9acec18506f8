package dispatcher

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/internal/identity"
	"github.com/agentfleet/agentfleet/store"
)

// Authorization: every /v1 route needs a role (routeAccess), held in a
// scope:
//
//   - scopeNone: any authenticated principal.
//   - scopeSome: the role in at least one tenant; the handler then keeps to
//     the tenants where the principal holds it (lists, counts, usage,
//     stats, tokens, the audit log, submissions, budgets: a fleet-wide
//     budget, one without a tenant, needs the role in every tenant).
//   - scopeAll: the role in every tenant (a grant for identity.AllTenants):
//     what is not yet kept per tenant (webhook deliveries).
//   - scopeTask, scopeSession: the role in the tenant of the task named by
//     {id} (of the session's task). A task in a tenant where the principal
//     holds no role at all is a 404, as if it did not exist; one it may see
//     but not act on is a 403 naming the role it lacks.
//
// A submitter cancels only the tasks it submitted (a child counts as its
// root's); an approver or admin cancels any in its tenant. Steering,
// follow-ups, configure and compact take the submitter role on any task of
// the tenant.

type scope int

const (
	scopeNone scope = iota
	scopeSome
	scopeAll
	scopeTask
	scopeSession
)

// access is what a route requires, and its audit action ("" for a route
// not recorded: the reads).
type access struct {
	role   identity.Role
	scope  scope
	action string
}

// routeAccess is the role each route requires; a test checks that it
// covers every route of handlers.routes.
var routeAccess = map[string]access{
	"POST /v1/stream-tickets":                      {identity.Viewer, scopeSome, ""},
	"GET /v1/whoami":                               {"", scopeNone, ""},
	"POST /v1/schedules":                           {identity.Submitter, scopeSome, "schedule.create"},
	"GET /v1/schedules":                            {identity.Viewer, scopeSome, ""},
	"GET /v1/schedules/{id}":                       {identity.Viewer, scopeSome, ""},
	"DELETE /v1/schedules/{id}":                    {identity.Submitter, scopeSome, "schedule.delete"},
	"POST /v1/schedules/{id}/pause":                {identity.Submitter, scopeSome, "schedule.pause"},
	"POST /v1/schedules/{id}/resume":               {identity.Submitter, scopeSome, "schedule.resume"},
	"POST /v1/tasks":                               {identity.Submitter, scopeSome, "task.submit"},
	"POST /v1/tasks/batch":                         {identity.Submitter, scopeSome, "task.submit"},
	"GET /v1/tasks":                                {identity.Viewer, scopeSome, ""},
	"GET /v1/tasks/{id}":                           {identity.Viewer, scopeTask, ""},
	"GET /v1/tasks/{id}/tree":                      {identity.Viewer, scopeTask, ""},
	"POST /v1/tasks/{id}/cancel":                   {identity.Submitter, scopeTask, "task.cancel"},
	"POST /v1/tasks/{id}/steer":                    {identity.Submitter, scopeTask, "task.steer"},
	"POST /v1/tasks/{id}/follow_up":                {identity.Submitter, scopeTask, "task.follow_up"},
	"POST /v1/tasks/{id}/configure":                {identity.Submitter, scopeTask, "task.configure"},
	"POST /v1/tasks/{id}/compact":                  {identity.Submitter, scopeTask, "task.compact"},
	"POST /v1/tasks/{id}/approvals/{call_id}":      {identity.Approver, scopeTask, "approval.answer"},
	"GET /v1/tasks/{id}/permissions":               {identity.Viewer, scopeTask, ""},
	"GET /v1/tasks/{id}/sessions":                  {identity.Viewer, scopeTask, ""},
	"GET /v1/tasks/{id}/artifacts":                 {identity.Viewer, scopeTask, ""},
	"GET /v1/tasks/{id}/rounds":                    {identity.Viewer, scopeTask, ""},
	"GET /v1/tasks/{id}/artifacts/{kind}":          {identity.Viewer, scopeTask, ""},
	"GET /v1/tasks/{id}/events":                    {identity.Viewer, scopeTask, ""},
	"GET /v1/tasks/{id}/tree/events":               {identity.Viewer, scopeTask, ""},
	"GET /v1/tasks/{id}/trace":                     {identity.Viewer, scopeTask, ""},
	"GET /v1/events":                               {identity.Viewer, scopeSome, ""},
	"GET /v1/sessions/{id}/turns":                  {identity.Viewer, scopeSession, ""},
	"GET /v1/sessions/{id}/tool_outputs/{call_id}": {identity.Viewer, scopeSession, ""},
	"GET /v1/counts":                               {identity.Viewer, scopeSome, ""},
	"GET /v1/stats":                                {identity.Viewer, scopeSome, ""},
	"GET /v1/usage":                                {identity.Viewer, scopeSome, ""},
	"GET /v1/reports":                              {identity.Viewer, scopeSome, ""},
	"GET /v1/reports/export":                       {identity.Viewer, scopeSome, ""},
	"GET /v1/budgets":                              {identity.Viewer, scopeSome, ""},
	"GET /v1/budgets/{label}":                      {identity.Viewer, scopeSome, ""},
	"PUT /v1/budgets/{label}":                      {identity.Admin, scopeSome, "budget.put"},
	"DELETE /v1/budgets/{label}":                   {identity.Admin, scopeSome, "budget.delete"},
	"GET /v1/webhooks/deliveries":                  {identity.Admin, scopeAll, ""},
	"POST /v1/tokens":                              {identity.Admin, scopeSome, "token.create"},
	"GET /v1/tokens":                               {identity.Admin, scopeSome, ""},
	"DELETE /v1/tokens/{id}":                       {identity.Admin, scopeSome, "token.revoke"},
	"GET /v1/audit":                                {identity.Admin, scopeSome, ""},
	"POST /v1/tasks/bulk":                          {identity.Submitter, scopeSome, "task.bulk"},
	"GET /v1/bulk/{id}":                            {identity.Viewer, scopeSome, ""},
	"GET /v1/retention":                            {identity.Viewer, scopeSome, ""},
	"POST /v1/queues/{queue}/pause":                {identity.Admin, scopeAll, "queue.pause"},
	"POST /v1/queues/{queue}/resume":               {identity.Admin, scopeAll, "queue.resume"},
	"GET /v1/pauses":                               {identity.Viewer, scopeSome, ""},
	"/v1/":                                         {"", scopeNone, ""},
}

// selfAuthenticated are the routes outside /v1 that take no API token and
// check a credential of their own (a test checks the git store is listed).
var selfAuthenticated = map[string]string{
	forgeEventsRoute: "the forge's webhook signature (forges.go)",
	gitStoreRoute:    "the workers' credential, then a tree token (gitstore.go)",
}

// authorize refuses, with a 403 naming the role, a request whose
// principal holds the route's role nowhere (scopeSome, scopeTask,
// scopeSession) or not in every tenant (scopeAll). A route missing from
// routeAccess is refused: a new route must say who may use it.
func (a *handlers) authorize(next http.Handler, v1 *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, route := v1.Handler(r)
		acc, ok := routeAccess[route]
		p := principal(r)
		switch {
		case !ok:
			writeErr(w, http.StatusForbidden, api.ErrorDetail{Code: api.CodeForbidden, Message: route + " has no role assigned: refused"})
		case acc.scope == scopeAll && !p.Can(identity.AllTenants, acc.role):
			writeErr(w, http.StatusForbidden, api.ErrorDetail{Code: api.CodeForbidden, Message: fmt.Sprintf(
				"%s needs the role %s in every tenant (a grant for %q); %s has %s", route, acc.role, identity.AllTenants, p.ID, describeGrants(p))})
		case acc.scope != scopeNone && acc.scope != scopeAll && len(tenantsWith(p, acc.role)) == 0 && !p.Can(identity.AllTenants, acc.role):
			writeErr(w, http.StatusForbidden, api.ErrorDetail{Code: api.CodeForbidden, Message: fmt.Sprintf(
				"%s needs the role %s in a tenant; %s has %s", route, acc.role, p.ID, describeGrants(p))})
		default:
			next.ServeHTTP(w, r)
		}
	})
}

func describeGrants(p identity.Principal) string {
	if len(p.Grants) == 0 {
		return "no role"
	}
	var s []string
	for t, r := range p.Grants {
		s = append(s, string(r)+" in "+t)
	}
	slices.Sort(s)
	return fmt.Sprint(s)
}

// tenantsWith returns the named tenants where p holds role (not the
// AllTenants grant).
func tenantsWith(p identity.Principal, role identity.Role) []string {
	var out []string
	for t := range p.Grants {
		if t != identity.AllTenants && p.Can(t, role) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// tenantFilter is the store filter of the tenants where p holds role: nil
// (every tenant) with the role in AllTenants. A requested tenant
// (?tenant=) narrows it; one the principal cannot see yields an empty,
// non-nil filter (nothing), never an error that would tell it exists.
func tenantFilter(p identity.Principal, role identity.Role, requested string) []string {
	if p.Can(identity.AllTenants, role) {
		if requested != "" {
			return []string{requested}
		}
		return nil
	}
	ts := tenantsWith(p, role)
	if requested != "" {
		if slices.Contains(ts, requested) {
			return []string{requested}
		}
		return []string{}
	}
	if ts == nil {
		ts = []string{}
	}
	return ts
}

// loadTask parses the {id} path value, loads that task and checks that
// the principal holds the route's role in its tenant, writing the 400,
// 403, 404 or 500 itself when it cannot go on.
func (a *handlers) loadTask(w http.ResponseWriter, r *http.Request) (store.Task, bool) {
	id, ok := taskID(w, r)
	if !ok {
		return store.Task{}, false
	}
	t, err := a.reads.GetTask(r.Context(), store.GetTaskParams{ID: id})
	if err != nil {
		a.fail(w, r, err)
		return store.Task{}, false
	}
	return t, a.mayActOn(w, r, t)
}

// mayActOn checks the route's role in t's tenant: a 404 for a task the
// principal may not see, a 403 for one it may see but not act on so. It
// notes the tenant and task for the audit log.
func (a *handlers) mayActOn(w http.ResponseWriter, r *http.Request, t store.Task) bool {
	p := principal(r)
	if !p.Can(t.Tenant, identity.Viewer) {
		a.fail(w, r, store.NotFoundf("GetTask", "no task %s", t.ID))
		return false
	}
	noteAudit(r, t.Tenant, t.ID.String())
	want := routeAccess[r.Pattern].role
	if want == "" {
		want = identity.Viewer
	}
	if !p.Can(t.Tenant, want) {
		writeErr(w, http.StatusForbidden, api.ErrorDetail{Code: api.CodeForbidden, Message: fmt.Sprintf(
			"%s needs the role %s in tenant %s; %s is %s there", r.Pattern, want, t.Tenant, p.ID, p.RoleIn(t.Tenant))})
		return false
	}
	if r.Pattern == "POST /v1/tasks/{id}/cancel" && !p.Can(t.Tenant, identity.Approver) && t.SubmittedBy != p.ID {
		writeErr(w, http.StatusForbidden, api.ErrorDetail{Code: api.CodeForbidden, Message: fmt.Sprintf(
			"a submitter cancels only the tasks it submitted; task %s was submitted by another principal (an approver or admin of tenant %s may cancel it)", t.ID, t.Tenant)})
		return false
	}
	return true
}

// loadSession parses the {id} of /v1/sessions/{id}/... and checks the
// route's role in the tenant of the session's task (404 when the
// principal may not see it).
func (a *handlers) loadSession(w http.ResponseWriter, r *http.Request) (store.Session, bool) {
	id, ok := sessionID(w, r)
	if !ok {
		return store.Session{}, false
	}
	s, err := a.reads.GetSession(r.Context(), store.GetSessionParams{ID: id})
	if err != nil {
		a.fail(w, r, err)
		return store.Session{}, false
	}
	t, err := a.reads.GetTask(r.Context(), store.GetTaskParams{ID: s.TaskID})
	if err != nil {
		a.fail(w, r, err)
		return store.Session{}, false
	}
	if !principal(r).Can(t.Tenant, identity.Viewer) {
		a.fail(w, r, store.NotFoundf("GetSession", "no session %s", id))
		return store.Session{}, false
	}
	return s, a.mayActOn(w, r, t)
}
