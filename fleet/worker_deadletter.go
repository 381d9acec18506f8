package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// HandleDeadLetter returns the dead-letter handler: the task of a message
// that exhausted its deliveries or was terminated is marked failed with the
// reason dead_letter (the detail goes to the result), unless it is already
// final (a worker that terms a message fails its task first). It is
// idempotent.
//
// Every worker runs a watcher with it (they share one durable consumer, so
// each dead letter is handled once, at least once), so dead letters are
// recorded even when no dispatcher runs; a dispatcher may watch too.
func HandleDeadLetter(st store.Store, log *slog.Logger) queue.DeadLetterHandler {
	if log == nil {
		log = slog.Default()
	}
	return func(ctx context.Context, dl queue.DeadLetter) error {
		id, err := uuid.Parse(dl.TaskID)
		if err != nil {
			log.Warn("dead letter without a task id", "reason", dl.Reason, "stream_seq", dl.StreamSeq)
			return nil
		}
		detail := fmt.Sprintf("dead letter: %s after %d deliveries", dl.Reason, dl.Deliveries)
		if dl.TermReason != "" {
			detail += ": " + dl.TermReason
		}
		err = failFromAnyState(ctx, st, id, ReasonDeadLetter, detail)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	}
}
