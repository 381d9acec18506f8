package dispatcher

import (
	"net/http"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/store"
)

// rounds serves GET /v1/tasks/{id}/rounds (rounds.go).
func (a *handlers) rounds(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	list, err := taskRounds(r.Context(), a.reads, t)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, list)
}

// reopen answers a follow-up of an ended task: 202 with the round it
// starts (Dispatcher.Reopen).
func (a *handlers) reopen(w http.ResponseWriter, r *http.Request, t store.Task, message string) {
	ctx := WithRoundTrigger(r.Context(), RoundTrigger{Trigger: api.TriggerAPI}) // rounds.go
	round, err := a.svc.Reopen(ctx, t, message)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, api.ControlResponse{OK: true, Reopened: true, Round: round})
}
