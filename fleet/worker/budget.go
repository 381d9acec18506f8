package worker

import (
	"context"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet/budget"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/fleet/worker/internal/eventpump"
	"github.com/agentfleet/agentfleet/store"
)

// stopBudget: the task's label spent its budget (see fleet/budget).
const stopBudget = budget.Reason

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

// exhaustedBudget returns the spent budget that applies to t (its tenant
// and labels), if any.
func (w *Worker) exhaustedBudget(t store.Task) (budget.Budget, bool) {
	if bw := w.budgets.Load(); bw != nil {
		return bw.Exhausted(t.Tenant, t.Labels)
	}
	return budget.Budget{}, false
}

// budgetAtClaim holds or cancels a just-claimed task whose label's budget
// is spent, before its session starts; ok is false when none is.
func (w *Worker) budgetAtClaim(ctx context.Context, t store.Task) (settlement, bool) {
	b, ok := w.exhaustedBudget(t)
	switch {
	case !ok:
		return settlement{}, false
	case b.OnExhausted != budget.Cancel:
		return w.holdTask(ctx, t, b, nil), true
	}
	if _, err := w.ends.End(ctx, taskops.BudgetCancelled(t.ID, w.cfg.ID, budget.Reason, b.Label)); err != nil {
		w.log.Warn("cancelling a task for its budget", "task_id", t.ID, "err", err)
		return nak(w.backoff(1)), true
	}
	return ack(), true
}

// holdTask publishes BUDGET_HELD (first: whoever sees the task held finds
// it), puts the task back to queued held by its budget and acknowledges
// its message: the dispatcher republishes it when the budget is raised.
// pump is the run's event pump, nil before a session started.
func (w *Worker) holdTask(ctx context.Context, t store.Task, b budget.Budget, pump *eventpump.Pump) settlement {
	if pump != nil {
		_ = pump.Publish(ctx, budget.EventHeld, b.Held(), true)
	} else {
		_ = w.eventSink().PublishAfterLast(ctx, t, budget.EventHeld, b.Held())
	}
	if err := budget.HoldTask(ctx, w.st, t.ID, w.cfg.ID); err != nil {
		w.log.Warn("holding a task for its budget", "task_id", t.ID, "err", err)
		return nak(w.backoff(1))
	}
	w.log.Info("task held: its label's budget is spent", "task_id", t.ID, "label", b.Label)
	return ack()
}

// checkBudget stops the run after the turn just recorded when its label's
// budget is spent.
func (r *run) checkBudget() {
	if _, ok := r.w.exhaustedBudget(r.task); ok {
		r.abort(stopBudget)
	}
}

// budgetStop settles a run stopped by a budget: cancelled with reason
// budget, or held (see holdTask).
func (r *run) budgetStop(ctx context.Context, out agent.Outcome) settlement {
	b, ok := r.w.exhaustedBudget(r.task)
	if ok && b.OnExhausted == budget.Cancel {
		end := taskops.BudgetCancelled(r.task.ID, r.w.cfg.ID, budget.Reason, b.Label)
		return r.finish(ctx, end.To, end.Reason, r.result(out, false, end.Result.Error))
	}
	r.flushTurns(ctx)
	return r.w.holdTask(ctx, r.task, b, r.pump)
}
