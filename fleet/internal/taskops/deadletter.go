package taskops

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// HandleDeadLetter returns the one dead-letter rule: the task of a message
// that exhausted its deliveries or was terminated ends as failed through c
// (DeadLettered: reason fleet.ReasonDeadLetter, and the result's error says
// what happened, "dead letter: max_deliveries after 5 deliveries" with the
// term reason when there is one), so its waiting parent wakes and its
// children follow its child policy, as after any end. A task already
// final is left as it is (a worker that terms a message ends its task
// first). A message without a task id, or for a task that does not exist,
// is logged and dropped.
//
// Every worker runs a watcher with it (they share one durable consumer, so
// each dead letter is handled once, at least once) and a dispatcher may
// watch too. failed, when not nil, is called each time the handler ended a
// task (the dead-letter metric).
func HandleDeadLetter(c *Completer, failed func()) queue.DeadLetterHandler {
	return func(ctx context.Context, dl queue.DeadLetter) error {
		log := c.log()
		id, err := uuid.Parse(dl.TaskID)
		if err != nil {
			log.Warn("dead letter without a task id", "reason", dl.Reason, "stream_seq", dl.StreamSeq)
			return nil //nolint:nilerr // logged; nothing to fail, and the message is deleted
		}
		ended, err := c.End(ctx, DeadLettered(id, dl))
		switch {
		case errors.Is(err, store.ErrNotFound):
			log.Warn("dead letter of a task that does not exist", "task_id", id, "reason", dl.Reason)
			return nil
		case err != nil:
			return err
		case ended.Moved:
			log.Info("task failed: dead letter", "task_id", id, "reason", dl.Reason, "deliveries", dl.Deliveries)
			if failed != nil {
				failed()
			}
		}
		return nil
	}
}

// DeadLetterDetail is the result error of a task failed by a dead letter.
func DeadLetterDetail(dl queue.DeadLetter) string {
	detail := fmt.Sprintf("dead letter: %s after %d deliveries", dl.Reason, dl.Deliveries)
	if dl.TermReason != "" {
		detail += ": " + dl.TermReason
	}
	return detail
}
