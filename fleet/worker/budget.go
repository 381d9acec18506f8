package worker

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/budget"
	"github.com/agentfleet/agentfleet/store"
)

// stopBudget: the task's label spent its budget (see fleet/budget).
const stopBudget = budget.Reason

// EventBudgetHeld is the event kind published when a budget holds a task
// (queued again, not started until the budget is raised).
const EventBudgetHeld = "BUDGET_HELD"

// BudgetHeldData is the data of a BUDGET_HELD event.
type BudgetHeldData struct {
	Label       string  `json:"label"`
	LimitUSD    float64 `json:"limit_usd"`
	SpentUSD    float64 `json:"spent_usd"`
	OnExhausted string  `json:"on_exhausted"`
}

// watchBudgets starts the budgets watch; without it (the bucket cannot
// be opened) the worker runs without budgets and says so.
func (w *Worker) watchBudgets(ctx context.Context) func() {
	book, err := budget.Open(ctx, w.q)
	var bw *budget.Watcher
	if err == nil {
		bw, err = book.Watch(ctx)
	}
	if err != nil {
		w.log.Warn("budgets are not enforced on this worker: watching the budgets bucket failed", "err", err)
		return func() {}
	}
	w.budgets.Store(bw)
	return func() { _ = bw.Stop() }
}

// exhaustedBudget returns the spent budget that applies to labels, if any.
func (w *Worker) exhaustedBudget(labels map[string]string) (budget.Budget, bool) {
	bw := w.budgets.Load()
	if bw == nil {
		return budget.Budget{}, false
	}
	return bw.Exhausted(labels)
}

// budgetAtClaim holds or cancels a just-claimed task whose label's budget
// is spent, before its session starts; ok is false when none is.
func (w *Worker) budgetAtClaim(ctx context.Context, t store.Task) (settlement, bool) {
	b, ok := w.exhaustedBudget(t.Labels)
	if !ok {
		return settlement{}, false
	}
	if b.OnExhausted == budget.Cancel {
		body, _ := json.Marshal(fleet.TaskResult{Error: "the budget of " + b.Label + " is spent"})
		_, err := w.st.TransitionTask(ctx, store.TransitionTaskParams{ID: t.ID, From: store.TaskRunning,
			To: store.TaskCancelled, WorkerID: w.cfg.ID, Result: body, Error: budget.Reason})
		if err != nil && !errors.Is(err, store.ErrConflict) {
			return nak(w.backoff(1)), true
		}
		w.metrics.tasks.WithLabelValues(string(store.TaskCancelled)).Inc()
		w.afterEndByID(ctx, t.ID)
		return ack(), true
	}
	return w.holdTask(ctx, t, b, nil), true
}

// holdTask puts a running task back to queued, marked held by a budget
// (error "budget"), publishes BUDGET_HELD and acknowledges its message:
// the dispatcher republishes it when the budget is raised. pump is the
// run's event pump, nil before a session started.
func (w *Worker) holdTask(ctx context.Context, t store.Task, b budget.Budget, pump *eventPump) settlement {
	// The event goes first: whoever sees the task held finds it.
	data, _ := json.Marshal(BudgetHeldData{Label: b.Label, LimitUSD: b.LimitUSD, SpentUSD: b.SpentUSD, OnExhausted: b.OnExhausted})
	if pump != nil {
		_ = pump.publish(ctx, EventBudgetHeld, data, true)
	} else if last, err := w.q.LastSeq(ctx, t.RootID.String(), t.ID.String()); err == nil {
		_ = w.pub.PublishConfirmed(ctx, envelope(t, last+1, EventBudgetHeld, data))
	} else {
		w.log.Warn("publishing BUDGET_HELD", "task_id", t.ID, "err", err)
	}
	_, err := w.st.TransitionTask(ctx, store.TransitionTaskParams{ID: t.ID, From: store.TaskRunning,
		To: store.TaskQueued, WorkerID: w.cfg.ID, Error: budget.Reason})
	if err != nil && !errors.Is(err, store.ErrConflict) {
		w.log.Warn("holding a task for its budget", "task_id", t.ID, "err", err)
		return nak(w.backoff(1))
	}
	w.log.Info("task held: its label's budget is spent", "task_id", t.ID, "label", b.Label)
	return ack()
}

// checkBudget stops the run after the turn just recorded when its label's
// budget is spent.
func (r *run) checkBudget() {
	if _, ok := r.w.exhaustedBudget(r.task.Labels); ok {
		r.abort(stopBudget)
	}
}

// budgetStop settles a run stopped by a budget: cancelled with reason
// budget, or held (see holdTask). A budget raised meanwhile holds it all
// the same; the dispatcher releases it at its next check.
func (r *run) budgetStop(ctx context.Context, out agent.Outcome) settlement {
	b, ok := r.w.exhaustedBudget(r.task.Labels)
	if ok && b.OnExhausted == budget.Cancel {
		return r.finish(ctx, store.TaskCancelled, budget.Reason, r.result(out, false, "the budget of "+b.Label+" is spent"))
	}
	r.flushTurns(ctx)
	return r.w.holdTask(ctx, r.task, b, r.pump)
}
