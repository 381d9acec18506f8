package taskops

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// CancelledTree reports what CancelTree did.
type CancelledTree struct {
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
// cancelled parent cannot be claimed), counts each end, asks the session of
// every one that was running to abort (each request bounded by
// AbortTimeout; a failed abort does not stop the others) and wakes the
// parent of id if it waits for it. The error is the store's; an empty
// Tasks means nothing was left to cancel.
func (c *Completer) CancelTree(ctx context.Context, id uuid.UUID, reason string) (CancelledTree, error) {
	tasks, err := c.Store.CancelSubtree(ctx, store.CancelSubtreeParams{ID: id, Reason: reason})
	if err != nil {
		return CancelledTree{}, err
	}
	res := CancelledTree{Tasks: tasks}
	if len(tasks) == 0 {
		return res, nil
	}
	// The subtree's tenant (children inherit their parent's), for the
	// aborts' control subjects, and the task whose parent may wait.
	t, readErr := c.Store.GetTask(ctx, store.GetTaskParams{ID: id})
	var errs []error
	for _, k := range tasks {
		if c.Ended != nil {
			c.Ended(store.TaskCancelled)
		}
		if k.From != store.TaskRunning {
			continue
		}
		if readErr != nil {
			errs = append(errs, fmt.Errorf("aborting task %s: reading its tenant: %w", k.ID, readErr))
			continue
		}
		switch err := c.abort(ctx, fleet.SessionTenant(t), k.ID); {
		case err == nil:
			res.Aborted++
		case !errors.Is(err, queue.ErrNotRunning):
			errs = append(errs, fmt.Errorf("aborting task %s: %w", k.ID, err))
		}
	}
	res.AbortErr = errors.Join(errs...)
	if readErr == nil {
		if err := c.wakeParent(ctx, t); err != nil {
			c.log().Warn("waking the parent of a cancelled task", "task_id", id, "err", err)
		}
	}
	return res, nil
}

// abort asks the session of task id, of tenant, to abort.
func (c *Completer) abort(ctx context.Context, tenant string, id uuid.UUID) error {
	timeout := c.AbortTimeout
	if timeout <= 0 {
		timeout = queue.DefaultControlTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	_, err := c.Queue.Control(ctx, tenant, fleet.SessionSubject(id), queue.ControlRequest{Op: queue.OpAbort})
	return err
}
