package worker

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// park persists the parked session's state: the task becomes waiting with
// what it waits for, its message is acked and its slot freed. The history
// is in the store already (every turn is recorded before the loop goes on).
// A child that ended between the wait and the state change is caught by
// checking the children after it.
func (r *run) park(ctx context.Context) settlement {
	w := r.w
	wf := fleet.WaitingFor{WaitID: strconv.Itoa(r.task.Attempts), Children: r.awaited(), Approvals: r.approvals.Pending()}
	body, _ := json.Marshal(wf)
	_, err := w.st.TransitionTask(ctx, store.TransitionTaskParams{ID: r.task.ID, From: store.TaskRunning,
		To: store.TaskWaiting, WorkerID: w.cfg.ID, WaitingFor: body})
	if err != nil {
		if errors.Is(err, store.ErrConflict) { // cancelled meanwhile
			return ack()
		}
		r.log.Warn("parking; handing back", "err", err)
		return r.giveBack(ctx, w.backoff(r.d.NumDelivered))
	}
	w.metrics.parks.Inc()
	r.log.Debug("parked", "waiting_for", wf.Children)
	if _, err := w.ends.ResumeIfDone(ctx, r.task, wf, uuid.Nil); err != nil {
		r.log.Warn("resuming after children that already ended", "err", err)
	}
	return ack()
}

// awaited is every child the parked round waits for: the one whose wait
// parked the session and those of the round's later wait calls (which the
// agent reports, agent.PendingWaits), which could not complete before it
// anyway. The parent wakes once all of them have ended, so children ending
// together wake it once.
func (r *run) awaited() []uuid.UUID {
	ids := r.spawner.Awaited()
	for _, agentID := range agent.PendingWaits(r.sess.History()) {
		if id, err := uuid.Parse(agentID); err == nil && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}
