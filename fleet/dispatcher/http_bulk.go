package dispatcher

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/internal/holds"
	"github.com/agentfleet/agentfleet/internal/identity"
	"github.com/agentfleet/agentfleet/store"
)

// bulker is what the bulk routes ask of the dispatcher (bulk.go).
type bulker interface {
	BulkPreview(ctx context.Context, action string, f api.BulkFilter, sc bulkScope) (api.BulkPreview, error)
	StartBulk(ctx context.Context, action, reason string, prio int, f api.BulkFilter, sc bulkScope) api.BulkJob
	BulkJob(id uuid.UUID) (api.BulkJob, []string, <-chan struct{}, bool)
	// pause.go
	PauseQueue(ctx context.Context, q, reason string) (api.PauseView, error)
	ResumeQueue(ctx context.Context, q string) error
	Pauses(ctx context.Context, tenants []string) (api.PausesView, error)
}

// retentionViewer shows the retention policy (retention.go).
type retentionViewer interface {
	view(tenants []string) api.RetentionView
}

// bulkTasks serves POST /v1/tasks/bulk: a dry run answers 200 with a
// BulkPreview; an action answers 202 with its BulkJob and a Location to
// poll (GET /v1/bulk/{id}). It takes the submitter role: the filter
// keeps to the tenants where the caller holds it (a named tenant where
// it does not is a 403).
func (a *handlers) bulkTasks(w http.ResponseWriter, r *http.Request) {
	var req api.BulkRequest
	if !decodeBody(w, r, maxSmallBody, "body", &req) {
		return
	}
	if !slices.Contains(api.BulkActions, req.Action) {
		badRequestf(w, "action", "%q is not a bulk action (want one of %v)", req.Action, api.BulkActions)
		return
	}
	if field, reason := checkBulkFilter(req.Filter); field != "" {
		badRequestf(w, "filter."+field, "%s", reason)
		return
	}
	if queuedRootsOnly(req.Action) {
		if field, reason := holds.CheckFilter(req.Filter); field != "" {
			badRequestf(w, "filter."+field, "%s", reason)
			return
		}
	}
	prio, field, reason := bulkPriority(req)
	if field != "" {
		badRequestf(w, field, "%s", reason)
		return
	}
	p := principal(r)
	if t := req.Filter.Tenant; t != "" && !p.Can(t, identity.Submitter) {
		noteAudit(r, t, "")
		writeErr(w, http.StatusForbidden, api.ErrorDetail{Code: api.CodeForbidden, Field: "filter.tenant", Message: fmt.Sprintf(
			"%s may not act on the tasks of tenant %q: bulk actions need the role submitter there", p.ID, t)})
		return
	}
	sc := bulkScope{Tenants: tenantFilter(p, identity.Submitter, req.Filter.Tenant), MayCancel: func(t store.Task) bool {
		return p.Can(t.Tenant, identity.Approver) || t.SubmittedBy == p.ID
	}}
	for _, t := range sc.Tenants {
		noteAudit(r, t, "")
	}
	if req.DryRun {
		noteAction(r, "task.bulk_"+req.Action+"_dry_run", "dry run")
		prev, err := a.bulk.BulkPreview(r.Context(), req.Action, req.Filter, sc)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, prev)
		return
	}
	job := a.bulk.StartBulk(r.Context(), req.Action, req.Reason, prio, req.Filter, sc)
	noteAction(r, "task.bulk_"+req.Action, "bulk/"+job.ID.String())
	w.Header().Set("Location", "/v1/bulk/"+job.ID.String())
	writeJSON(w, http.StatusAccepted, job)
}

// bulkPriority is set_priority's priority: required and in range there,
// refused with any other action.
func bulkPriority(req api.BulkRequest) (prio int, field, reason string) {
	switch {
	case req.Action != api.BulkSetPriority && req.Priority != nil:
		return 0, "priority", "only set_priority takes a priority"
	case req.Action != api.BulkSetPriority:
		return 0, "", ""
	case req.Priority == nil:
		return 0, "priority", fmt.Sprintf("set_priority needs the new priority (%d to %d)", -fleet.MaxPriority, fleet.MaxPriority)
	case *req.Priority < -fleet.MaxPriority || *req.Priority > fleet.MaxPriority:
		return 0, "priority", fmt.Sprintf("must be between %d and %d, got %d", -fleet.MaxPriority, fleet.MaxPriority, *req.Priority)
	}
	return *req.Priority, "", ""
}

// checkBulkFilter refuses a filter that selects every task, or names a
// state that does not exist.
func checkBulkFilter(f api.BulkFilter) (field, reason string) {
	if f.IsZero() {
		return "filter", "selects every task: name at least a tenant, label, state, queue, root, created range or error"
	}
	for _, s := range f.States {
		if !s.Valid() {
			return "states", fmt.Sprintf("%q is not a task state (want one of %v)", s, store.TaskStates)
		}
	}
	if !f.CreatedAfter.IsZero() && !f.CreatedBefore.IsZero() && !f.CreatedAfter.Before(f.CreatedBefore) {
		return "created_before", "must be after created_after"
	}
	return "", ""
}

// bulkJob serves GET /v1/bulk/{id}: the job's progress, or with
// "Accept: text/event-stream" a stream of it (one "progress" event per
// change, the last when it ends). A job is visible to the principal that
// started it and to viewers of every tenant it reached; to others it
// does not exist.
func (a *handlers) bulkJob(w http.ResponseWriter, r *http.Request) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		badRequestf(w, "id", "%q is not a bulk job id (a UUID)", r.PathValue("id"))
		return
	}
	job, tenants, changed, ok := a.bulk.BulkJob(id)
	if !ok || !mayViewBulk(principal(r), job, tenants) {
		writeErr(w, http.StatusNotFound, api.ErrorDetail{Code: api.CodeNotFound, Message: fmt.Sprintf(
			"no bulk job %s (progress is kept in memory for the last %d jobs of this dispatcher)", id, maxBulkJobs)})
		return
	}
	if r.Header.Get("Accept") != "text/event-stream" {
		writeJSON(w, http.StatusOK, job)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	heartbeat := time.NewTicker(a.opts.SSEHeartbeat)
	defer heartbeat.Stop()
	for {
		b, _ := json.Marshal(job)
		if _, err := fmt.Fprintf(w, "event: progress\ndata: %s\n\n", b); err != nil || rc.Flush() != nil || job.State != api.BulkRunning {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-heartbeat.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
				return
			}
			continue
		case <-changed:
		}
		job, _, changed, _ = a.bulk.BulkJob(id)
	}
}

func mayViewBulk(p identity.Principal, job api.BulkJob, tenants []string) bool {
	if job.Principal == p.ID || p.Can(identity.AllTenants, identity.Viewer) {
		return true
	}
	if tenants == nil {
		return false
	}
	for _, t := range tenants {
		if !p.Can(t, identity.Viewer) {
			return false
		}
	}
	return true
}

// retention serves GET /v1/retention: the policies of the tenants the
// caller sees and the rows deleted since the dispatcher started.
func (a *handlers) retention(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, a.sweep.view(tenantFilter(principal(r), identity.Viewer, "")))
}
