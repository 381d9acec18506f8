package worker

import (
	"context"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/internal/holds"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Pauses (fleet/internal/holds): a paused queue is not pulled (its loop
// waits on the Set, PullerConfig.QueueGate), and the start message of a
// task a pause holds is recorded as held and acked instead of claimed, so
// the task neither starts nor counts an attempt, and its message spends no
// redelivery. A dispatcher starts it again once no pause holds it. A start
// message a priority change replaced (holds/moves.go) is acked unclaimed.

// openHolds opens the fleet's pauses for Run; the returned stop closes them.
func (w *Worker) openHolds(ctx context.Context) (func(), error) {
	s, err := holds.Open(ctx, w.q)
	if err != nil {
		return nil, err
	}
	w.holds = s
	return s.Close, nil
}

// queueGate holds a paused queue's pull loop.
func (w *Worker) queueGate(ctx context.Context, q string) error {
	if w.holds == nil {
		return nil
	}
	return w.holds.WaitQueue(ctx, q)
}

// holdAtDelivery holds the task of a start message when a pause holds
// it: it reads the task (only while some pause is in force), records it
// held and acks. A failure to record it retries the message later.
func (w *Worker) holdAtDelivery(ctx context.Context, d *queue.Delivery, id uuid.UUID) (settlement, bool) {
	if w.holds == nil || d.Message.Type != queue.MsgStart {
		return settlement{}, false
	}
	if w.holds.StaleStart(id, d.StreamSeq) {
		return ack(), true // moved to another level: its new message starts it
	}
	if !w.holds.MayHold(d.Source) { // Source: the queue, or "worker"
		return settlement{}, false
	}
	t, err := w.st.GetTask(ctx, store.GetTaskParams{ID: id})
	if err != nil {
		return settlement{}, false // the claim says what is wrong
	}
	r, ok := w.holds.Holding(t)
	if !ok {
		return settlement{}, false
	}
	if err := w.holds.Hold(ctx, t, d.StreamSeq, w.cfg.ID); err != nil {
		w.log.Warn("holding a paused task", "task_id", id, "err", err)
		return nak(w.backoff(d.NumDelivered)), true
	}
	w.log.Debug("task held by a pause", "task_id", id, "pause", r.Key())
	return ack(), true
}
