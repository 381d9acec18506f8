package worker

import (
	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/queue"
)

// A delivery for a task this worker is running now is not work: the run
// holds its own message and settles it. Naking it for stale_after, as for
// a task another worker runs, would deliver it again every stale_after
// until max_deliver, and its dead letter would fail the live task (seen in
// the repository bench under load: one InProgress that came late, a
// dead-lettered task, and the git server's broken pipes as its clone was
// killed). So:
//
//   - a redelivery of the run's own message (the same stream sequence;
//     its InProgress came late) is naked for the queue's ack wait, so the
//     run's next InProgress puts it back to sleep;
//   - another start message of the task (a duplicate) is acked: the task
//     started, and its run settles the message it holds.
//
// Any other message keeps the rule for a task another worker runs.

// deliveryWhileRunningHere says how to settle d, a message of task id
// that could not be claimed; false when this worker does not run id.
func (w *Worker) deliveryWhileRunningHere(d *queue.Delivery, id uuid.UUID) (settlement, bool) {
	w.mu.Lock()
	r := w.runs[id]
	w.mu.Unlock()
	switch {
	case r == nil:
		return settlement{}, false
	case r.d.StreamSeq == d.StreamSeq:
		return nak(w.q.Config().AckWait), true
	case d.Message.Type == queue.MsgStart:
		return ack(), true
	}
	return settlement{}, false
}
