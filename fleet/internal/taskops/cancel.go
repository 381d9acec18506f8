package taskops

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Cancelled reports what CancelTree did.
type Cancelled struct {
	// Tasks are the tasks cancelled in the store, with the state each was in.
	Tasks []store.CancelledTask
	// Aborted counts running sessions that acknowledged an abort; the
	// others stop when their worker next writes to the store (a fenced turn,
	// a heartbeat) and finds the task cancelled.
	Aborted int
	// AbortErr joins the aborts that failed for another reason than "no
	// session serves this task"; the store has cancelled those tasks all the
	// same, so it is for logs, not a failure of the cancel.
	AbortErr error
}

// CancelTree is the one subtree cancel: it cancels task id and every
// unfinished descendant in the store (queued and waiting ones never start
// again: a claim is a compare-and-set on the state, and a child of a
// cancelled parent cannot be claimed), then asks the session of every one
// that was running to abort, each request bounded by abortTimeout (<= 0:
// queue.DefaultControlTimeout). A failed abort does not stop the others. The
// error is the store's; an empty Tasks means nothing was left to cancel.
func CancelTree(ctx context.Context, st store.Store, q *queue.Client, id uuid.UUID, reason string, abortTimeout time.Duration) (Cancelled, error) {
	tasks, err := st.CancelSubtree(ctx, store.CancelSubtreeParams{ID: id, Reason: reason})
	if err != nil {
		return Cancelled{}, err
	}
	if abortTimeout <= 0 {
		abortTimeout = queue.DefaultControlTimeout
	}
	res := Cancelled{Tasks: tasks}
	var errs []error
	for _, c := range tasks {
		if c.From != store.TaskRunning {
			continue
		}
		switch err := abort(ctx, q, c.ID, abortTimeout); {
		case err == nil:
			res.Aborted++
		case !errors.Is(err, queue.ErrNotRunning):
			errs = append(errs, fmt.Errorf("aborting task %s: %w", c.ID, err))
		}
	}
	res.AbortErr = errors.Join(errs...)
	return res, nil
}

// abort asks the session of task id to abort.
func abort(ctx context.Context, q *queue.Client, id uuid.UUID, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := q.Control(ctx, fleet.SessionSubject(id), queue.ControlRequest{Op: queue.OpAbort})
	return err
}
