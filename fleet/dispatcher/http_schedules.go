package dispatcher

import (
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/internal/identity"
	"github.com/agentfleet/agentfleet/store"
)

// The schedule routes (schedules.go): a submitter of a tenant creates,
// pauses, resumes and deletes that tenant's schedules; a viewer lists
// them. A schedule of a tenant the principal cannot see is a 404.

func (a *handlers) createSchedule(w http.ResponseWriter, r *http.Request) {
	var req api.ScheduleRequest
	if !decodeBody(w, r, maxSmallBody, "body", &req) {
		return
	}
	if req.Cron == "" {
		badRequestf(w, "cron", "is required: a cron expression such as \"0 3 * * *\" (UTC) or @daily")
		return
	}
	if len(req.Name) > fleet.MaxNameBytes {
		badRequestf(w, "name", "is longer than %d bytes", fleet.MaxNameBytes)
		return
	}
	specs := []fleet.TaskSpec{req.Spec}
	if !a.assignTenants(w, r, specs) {
		return
	}
	s, err := a.svc.CreateSchedule(r.Context(), req.Name, req.Cron, specs[0], req.Paused)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	noteAudit(r, s.Tenant, s.ID.String())
	writeJSON(w, http.StatusCreated, scheduleView(s))
}

func (a *handlers) listSchedules(w http.ResponseWriter, r *http.Request) {
	list, err := a.svc.schedules().ListSchedules(r.Context(), store.ListSchedulesParams{
		Tenants: tenantFilter(principal(r), identity.Viewer, r.URL.Query().Get("tenant"))})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := api.ScheduleList{Schedules: make([]api.ScheduleView, len(list))}
	for i, s := range list {
		out.Schedules[i] = scheduleView(s)
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *handlers) getSchedule(w http.ResponseWriter, r *http.Request) {
	if s, ok := a.loadSchedule(w, r); ok {
		writeJSON(w, http.StatusOK, scheduleView(s))
	}
}

func (a *handlers) deleteSchedule(w http.ResponseWriter, r *http.Request) {
	s, ok := a.loadSchedule(w, r)
	if !ok {
		return
	}
	if err := a.svc.schedules().DeleteSchedule(r.Context(), s.ID); err != nil {
		a.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (a *handlers) pauseSchedule(w http.ResponseWriter, r *http.Request)  { a.setPaused(w, r, true) }
func (a *handlers) resumeSchedule(w http.ResponseWriter, r *http.Request) { a.setPaused(w, r, false) }

func (a *handlers) setPaused(w http.ResponseWriter, r *http.Request, paused bool) {
	s, ok := a.loadSchedule(w, r)
	if !ok {
		return
	}
	s, err := a.svc.PauseSchedule(r.Context(), s, paused)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, scheduleView(s))
}

// loadSchedule reads the schedule {id} and checks the route's role in its
// tenant: a 404 when the principal may not see it, a 403 when it may not
// act on it so.
func (a *handlers) loadSchedule(w http.ResponseWriter, r *http.Request) (store.Schedule, bool) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		badRequestf(w, "id", "%q is not a schedule id (a UUID)", r.PathValue("id"))
		return store.Schedule{}, false
	}
	s, err := a.svc.schedules().GetSchedule(r.Context(), id)
	p := principal(r)
	if err == nil && !p.Can(s.Tenant, identity.Viewer) {
		err = store.NotFoundf("GetSchedule", "no schedule %s", id)
	}
	if err != nil {
		a.fail(w, r, err)
		return store.Schedule{}, false
	}
	noteAudit(r, s.Tenant, s.ID.String())
	if want := routeAccess[r.Pattern].role; !p.Can(s.Tenant, want) {
		writeErr(w, http.StatusForbidden, api.ErrorDetail{Code: api.CodeForbidden, Message: fmt.Sprintf(
			"%s needs the role %s in tenant %s; %s is %s there", r.Pattern, want, s.Tenant, p.ID, p.RoleIn(s.Tenant))})
		return store.Schedule{}, false
	}
	return s, true
}

func scheduleView(s store.Schedule) api.ScheduleView {
	v := api.ScheduleView{ID: s.ID, Name: s.Name, Cron: s.Cron, Tenant: s.Tenant, CreatedBy: s.CreatedBy,
		Paused: s.Paused, NextFireAt: s.NextFireAt, CreatedAt: s.CreatedAt}
	v.Spec, _ = fleet.DecodeSpec(s.Spec) // stored by CreateSchedule from a valid spec
	if !s.LastFireAt.IsZero() {
		last := s.LastFireAt
		v.LastFireAt = &last
	}
	return v
}
