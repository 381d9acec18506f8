package dispatcher

import (
	"errors"
	"net/http"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/internal/identity"
	"github.com/agentfleet/agentfleet/queue"
)

// pauseQueue serves POST /v1/queues/{queue}/pause (admin in every
// tenant): no worker pulls the queue until it is resumed; its tasks keep
// their place. Pausing a paused queue is a no-op that answers 200 again.
func (a *handlers) pauseQueue(w http.ResponseWriter, r *http.Request) {
	q := r.PathValue("queue")
	if err := queue.CheckQueueName(q); err != nil {
		badRequestf(w, "queue", "%v", err)
		return
	}
	var req api.PauseQueueRequest
	if r.ContentLength != 0 && !decodeBody(w, r, maxSmallBody, "body", &req) {
		return
	}
	noteAudit(r, "", "queue/"+q)
	v, err := a.bulk.PauseQueue(r.Context(), q, req.Reason)
	if err != nil {
		a.failPause(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// resumeQueue serves POST /v1/queues/{queue}/resume: workers pull the
// queue again, oldest message first. A queue that is not paused is a 404.
func (a *handlers) resumeQueue(w http.ResponseWriter, r *http.Request) {
	q := r.PathValue("queue")
	if err := queue.CheckQueueName(q); err != nil {
		badRequestf(w, "queue", "%v", err)
		return
	}
	noteAudit(r, "", "queue/"+q)
	if err := a.bulk.ResumeQueue(r.Context(), q); err != nil {
		a.failPause(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// pauses serves GET /v1/pauses: the queue pauses, the filter pauses
// within the tenants the caller views, and how many tasks are held.
func (a *handlers) pauses(w http.ResponseWriter, r *http.Request) {
	v, err := a.bulk.Pauses(r.Context(), tenantFilter(principal(r), identity.Viewer, ""))
	if err != nil {
		a.failPause(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// failPause answers a pause error: none in force is a 404, pauses that
// cannot be opened (NATS away) a 503.
func (a *handlers) failPause(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, ErrNoPause):
		writeErr(w, http.StatusNotFound, api.ErrorDetail{Code: api.CodeNotFound, Message: err.Error()})
	case errors.Is(err, errNoHolds):
		w.Header().Set("Retry-After", "1")
		writeErr(w, http.StatusServiceUnavailable, api.ErrorDetail{Code: api.CodeUnavailable, Message: err.Error()})
	default:
		a.fail(w, r, err)
	}
}
