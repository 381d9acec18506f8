package approval

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// ExpiredReason is the reason an expired approval's denial gives the model.
const ExpiredReason = "no one answered in time; the request expired"

// SweepResult counts what one Sweep did.
type SweepResult struct {
	Expired  int // pending calls denied because they expired
	Requeued int // tasks a Decide that died half-way had left claimed, resumed to ask again
}

// Sweep denies the pending calls whose ExpiresAt is before now (By
// "expiry"), and resumes the tasks a Decide left claimed (ClaimerPrefix)
// with a heartbeat older than staleBefore: their session runs the round
// again and asks again. Errors of single
// tasks are skipped (the next sweep tries again); the first is returned.
func Sweep(ctx context.Context, st Store, q Queue, now, staleBefore time.Time) (SweepResult, error) {
	var res SweepResult
	var first error
	note := func(err error) {
		if err != nil && first == nil && !errors.Is(err, ErrNotPending) {
			first = err
		}
	}
	err := eachTask(ctx, st, store.ListTasksParams{States: []store.TaskState{store.TaskWaiting}}, func(t store.Task) {
		wf, err := fleet.DecodeWaitingFor(t.WaitingFor)
		if err != nil {
			return
		}
		for _, a := range wf.Approvals {
			if a.ExpiresAt.IsZero() || a.ExpiresAt.After(now) {
				continue
			}
			_, err := Decide(ctx, st, q, Decision{TaskID: t.ID, CallID: a.CallID, Reason: ExpiredReason, By: "expiry"})
			if err == nil {
				res.Expired++
			}
			note(err)
			return // the task is queued now; its other calls are asked again
		}
	})
	note(err)
	err = eachTask(ctx, st, store.ListTasksParams{States: []store.TaskState{store.TaskRunning}, HeartbeatBefore: staleBefore}, func(t store.Task) {
		if orig, ok := strings.CutPrefix(t.WorkerID, ClaimerPrefix); ok {
			note(requeue(ctx, st, q, t, orig))
			res.Requeued++
		}
	})
	note(err)
	return res, first
}

// eachTask calls f for every task matching p, page by page.
func eachTask(ctx context.Context, st Store, p store.ListTasksParams, f func(store.Task)) error {
	p.Limit = 500
	for {
		page, err := st.ListTasks(ctx, p)
		if err != nil {
			return err
		}
		for _, t := range page.Tasks {
			f(t)
		}
		if page.NextCursor == "" || ctx.Err() != nil {
			return ctx.Err()
		}
		p.Cursor = page.NextCursor
	}
}

// requeue resumes a task left claimed by a Decide that died: queued, then
// a resume to the worker that parked it (orig) or its queue.
func requeue(ctx context.Context, st Store, q Queue, t store.Task, orig string) error {
	if _, err := st.TransitionTask(ctx, store.TransitionTaskParams{ID: t.ID, From: store.TaskRunning, To: store.TaskQueued, WorkerID: t.WorkerID}); err != nil {
		return err
	}
	t.WorkerID = orig
	return resume(ctx, q, t, fleet.WaitingFor{WaitID: "requeue-" + strconv.Itoa(t.Attempts)}, "asked-again")
}
