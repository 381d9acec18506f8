package dispatcher

import (
	"net/http"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/store"
)

// reopen answers a follow-up of an ended task: 202 with the round it
// starts (Dispatcher.Reopen).
func (a *handlers) reopen(w http.ResponseWriter, r *http.Request, t store.Task, message string) {
	round, err := a.svc.Reopen(r.Context(), t, message)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, api.ControlResponse{OK: true, Reopened: true, Round: round})
}
