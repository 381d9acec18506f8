package worker

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Work pinned to a worker (children of a local workspace, resumes of a
// parent parked there) waits on that worker's own subject. When the worker
// is gone for good, the server deletes its consumer after the queue's
// WorkerInactiveThreshold without pulls; every worker looks for such
// orphaned work a few times per threshold and moves it to the task's shared
// queue, where any worker takes it, as after a crash: the session resumes
// from its recorded turns, in a fresh workspace. Workers moving the same
// work at once are harmless (see queue.Client.MoveWorkerMessages).
//
// A worker whose every slot is busy does not pull either, so its consumer
// may go too: a worker that still heartbeats a running task in the store
// is alive, and its work stays; its next pull makes the consumer again
// and takes that work (queue.Puller).

// moveOrphanedWorkEvery runs moveOrphanedWork until ctx ends.
func (w *Worker) moveOrphanedWorkEvery(ctx context.Context) {
	every := w.q.Config().WorkerInactiveThreshold / 4
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			w.moveOrphanedWork(ctx)
		}
	}
}

// moveOrphanedWork moves the pinned work of every worker found gone.
func (w *Worker) moveOrphanedWork(ctx context.Context) {
	ids, err := w.q.OrphanedWorkers(ctx)
	if err != nil && ctx.Err() == nil {
		w.log.Warn("looking for the work of gone workers", "err", err)
	}
	if len(ids) == 0 {
		return
	}
	alive, err := w.heartbeating(ctx)
	if err != nil {
		if ctx.Err() == nil {
			w.log.Warn("looking for live workers", "err", err)
		}
		return
	}
	for _, id := range ids {
		if id == w.cfg.ID || alive[id] {
			continue // alive: its consumer comes back with its next pull
		}
		n, err := w.q.MoveWorkerMessages(ctx, id, func(m queue.TaskMessage) (queue.Target, error) { return w.sharedTarget(ctx, m) })
		if err != nil && ctx.Err() == nil {
			w.log.Warn("moving the work of a gone worker", "worker", id, "moved", n, "err", err)
			continue
		}
		w.log.Info("moved the work of a gone worker to the shared queues", "worker", id, "moved", n)
	}
}

// heartbeating returns the workers with a running task whose heartbeat is
// fresh (newer than StaleAfter).
func (w *Worker) heartbeating(ctx context.Context) (map[string]bool, error) {
	alive := map[string]bool{}
	fresh := w.clock.Now().Add(-w.cfg.StaleAfter)
	p := store.ListTasksParams{States: []store.TaskState{store.TaskRunning}, Limit: store.MaxListLimit}
	for {
		page, err := w.st.ListTasks(ctx, p)
		if err != nil {
			return nil, err
		}
		for _, t := range page.Tasks {
			if t.HeartbeatAt.After(fresh) {
				alive[t.WorkerID] = true
			}
		}
		if page.NextCursor == "" {
			return alive, nil
		}
		p.Cursor = page.NextCursor
	}
}

// sharedTarget reads the task of a message pinned to a gone worker and
// asks the router where it goes (taskops.RescueTarget); an error when the
// store cannot tell.
func (w *Worker) sharedTarget(ctx context.Context, m queue.TaskMessage) (queue.Target, error) {
	id, err := uuid.Parse(m.TaskID)
	if err != nil {
		return taskops.RescueTarget(store.Task{}), nil //nolint:nilerr // no task id: its worker terms it
	}
	t, err := w.st.GetTask(ctx, store.GetTaskParams{ID: id})
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return queue.Target{}, err
	}
	return taskops.RescueTarget(t), nil
}
