package taskops

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// HandleDeadLetter returns the one dead-letter rule: the task of a message
// that exhausted its deliveries or was terminated is marked failed with
// the reason fleet.ReasonDeadLetter, and the result's error says what
// happened ("dead letter: max_deliveries after 5 deliveries", with the
// term reason when there is one), unless it is already final (a worker
// that terms a message fails its task first). A message without a task id,
// or for a task that does not exist, is logged and dropped.
//
// Every worker runs a watcher with it (they share one durable consumer, so
// each dead letter is handled once, at least once) and a dispatcher may
// watch too. failed, when not nil, is called each time the handler moved a
// task to failed (the dispatcher counts them).
func HandleDeadLetter(st store.Store, log *slog.Logger, failed func()) queue.DeadLetterHandler {
	if log == nil {
		log = slog.Default()
	}
	return func(ctx context.Context, dl queue.DeadLetter) error {
		id, err := uuid.Parse(dl.TaskID)
		if err != nil {
			log.Warn("dead letter without a task id", "reason", dl.Reason, "stream_seq", dl.StreamSeq)
			return nil
		}
		_, moved, err := FailFromAnyState(ctx, st, id, fleet.ReasonDeadLetter, DeadLetterDetail(dl))
		switch {
		case errors.Is(err, store.ErrNotFound):
			log.Warn("dead letter of a task that does not exist", "task_id", id, "reason", dl.Reason)
			return nil
		case err != nil:
			return err
		case moved:
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
