package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/internal/tracing"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// handle processes one delivery and settles it.
func (w *Worker) handle(ctx context.Context, d *queue.Delivery) {
	ctx, span := w.startClaim(ctx, d) // tracing.go
	s := w.process(ctx, d)
	endClaim(span, s)
	w.apply(ctx, d, s)
}

// process decodes the message, claims the task, runs its session and says
// how to settle the delivery. The claim comes first, without reading the
// task: a claim that fails says why (claimFailed reads the task then), and
// the common case costs one store round trip instead of two. While the
// store is away the claim waits for it, holding the message (see package
// fleet/internal/storegate), so an outage spends no delivery.
func (w *Worker) process(ctx context.Context, d *queue.Delivery) settlement {
	if d.DecodeErr != nil {
		return w.failCorrupt(ctx, d)
	}
	id, err := uuid.Parse(d.Message.TaskID)
	if err != nil {
		return w.failCorrupt(ctx, d)
	}
	if s, held := w.holdAtDelivery(ctx, d, id); held { // holds.go
		return s
	}
	from := []store.TaskState{store.TaskQueued}
	if d.Message.Type != queue.MsgStart {
		from = append(from, store.TaskWaiting)
	}
	claimed, err := w.st.ClaimTask(ctx, store.ClaimTaskParams{ID: id, WorkerID: w.cfg.ID, From: from,
		StaleBefore: w.clock.Now().Add(-w.cfg.StaleAfter)})
	if err != nil {
		return w.claimFailed(ctx, d, id, err)
	}
	if s, refused := w.refuseTenant(ctx, claimed); refused { // tenants.go
		return s
	}
	if s, held := w.budgetAtClaim(ctx, claimed); held {
		return s
	}
	spec, err := fleet.DecodeSpec(claimed.Spec)
	if err != nil {
		return w.failTask(ctx, claimed.ID, fleet.ReasonBadSpec, err.Error())
	}
	if !d.Published.IsZero() {
		w.metrics.claimLatency.Observe(time.Since(d.Published).Seconds())
	}
	r := newRun(w, d, claimed, spec)
	r.log = r.log.With(tracing.LogAttrs(ctx)...)
	w.register(r)
	defer w.unregister(r)
	if spec.Coordinates() {
		return r.coordinate(ctx) // best-of-N: attempts.go
	}
	return r.execute(ctx)
}

// claimFailed decides what to do with a message whose task could not be
// claimed: it does not exist (term), another worker owns it (try later, it
// may die), it ended (redo what follows an end, ack), it is parked and this
// is its start message (ack), its parent was cancelled (cancel it, ack), or
// the store failed (retry).
func (w *Worker) claimFailed(ctx context.Context, d *queue.Delivery, id uuid.UUID, err error) settlement {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return term("task " + id.String() + " does not exist")
	case !errors.Is(err, store.ErrConflict):
		w.log.Warn("claiming task", "task_id", id, "err", err)
		return nak(w.backoff(d.NumDelivered))
	}
	now, err := w.st.GetTask(ctx, store.GetTaskParams{ID: id})
	switch {
	case err != nil:
		return nak(w.backoff(d.NumDelivered))
	case now.State.Terminal():
		// Idempotent: redo what a crash may have cut short.
		if err := w.ends.AfterEnd(ctx, now); err != nil {
			w.log.Warn("publishing the SESSION_END of an ended task", "task_id", id, "err", err)
			return nak(w.backoff(d.NumDelivered))
		}
		return ack()
	case now.State == store.TaskWaiting && d.Message.Type == queue.MsgStart:
		return ack() // parked: its resume will come
	case (now.State == store.TaskQueued || now.State == store.TaskWaiting) && w.parentCancelled(ctx, now):
		return w.cancelOrphan(ctx, d, now.ID)
	}
	if s, here := w.deliveryWhileRunningHere(d, id); here { // running_here.go
		return s
	}
	// Running elsewhere with a fresh heartbeat (look again once it would
	// be stale).
	return nak(w.cfg.StaleAfter)
}

// parentCancelled reports whether the task's direct parent is cancelled,
// the reason the store refuses to claim a task that is otherwise claimable.
func (w *Worker) parentCancelled(ctx context.Context, t store.Task) bool {
	if t.ParentID == uuid.Nil {
		return false
	}
	p, err := w.st.GetTask(ctx, store.GetTaskParams{ID: t.ParentID})
	return err == nil && p.State == store.TaskCancelled
}

// cancelOrphan cancels a task that can never start because its parent is
// cancelled. A store error leaves the message for a redelivery, which
// looks again.
func (w *Worker) cancelOrphan(ctx context.Context, d *queue.Delivery, id uuid.UUID) settlement {
	if _, err := w.ends.End(ctx, taskops.Orphaned(id)); err != nil {
		w.log.Warn("cancelling a task whose parent is cancelled", "task_id", id, "err", err)
		return nak(w.backoff(d.NumDelivered))
	}
	return ack()
}

// failCorrupt records a message whose body cannot be decoded as failed (when
// its header names a task) and terminates it.
func (w *Worker) failCorrupt(ctx context.Context, d *queue.Delivery) settlement {
	reason := fmt.Sprintf("%s: %v", fleet.ReasonCorruptMessage, d.DecodeErr)
	if d.DecodeErr == nil {
		reason = fmt.Sprintf("%s: task id %q is not a UUID", fleet.ReasonCorruptMessage, d.Message.TaskID)
	}
	if id, err := uuid.Parse(d.TaskID); err == nil {
		if _, err := w.ends.End(ctx, taskops.FailedAnyState(id, fleet.ReasonCorruptMessage, reason)); err != nil {
			w.log.Warn("recording a corrupt message", "task_id", id, "err", err)
		}
	}
	w.log.Warn("terminating a corrupt task message", "task_id", d.TaskID, "reason", reason)
	return term(reason)
}

// failTask moves a task that cannot run to failed and terminates its
// message (were the end not written, the dead letter writes it).
func (w *Worker) failTask(ctx context.Context, id uuid.UUID, reason, detail string) settlement {
	if _, err := w.ends.End(ctx, taskops.FailedAnyState(id, reason, detail)); err != nil {
		w.log.Warn("failing task", "task_id", id, "err", err)
	}
	return term(reason + ": " + detail)
}
