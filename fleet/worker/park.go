package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// park persists the parked session's state: the task becomes waiting with
// what it waits for, its message is acked and its slot freed. The history
// is in the store already (every turn is recorded before the loop goes on).
// A child that ended between the wait and the state change is caught by
// checking the children after it.
func (r *run) park(ctx context.Context) settlement {
	w := r.w
	wf := fleet.WaitingFor{WaitID: strconv.Itoa(r.task.Attempts), Children: r.awaited(), Approvals: r.approvals.Pending()}
	body, _ := json.Marshal(wf)
	_, err := w.st.TransitionTask(ctx, store.TransitionTaskParams{ID: r.task.ID, From: store.TaskRunning,
		To: store.TaskWaiting, WorkerID: w.cfg.ID, WaitingFor: body})
	if err != nil {
		if errors.Is(err, store.ErrConflict) { // cancelled meanwhile
			return ack()
		}
		r.log.Warn("parking; handing back", "err", err)
		return r.giveBack(ctx, w.backoff(r.d.NumDelivered))
	}
	w.metrics.parks.Inc()
	r.log.Debug("parked", "waiting_for", wf.Children)
	if done, last := w.allEnded(ctx, r.task.ID, wf.Children); done {
		if err := w.enqueueResume(ctx, r.task, r.spec, wf, last); err != nil {
			r.log.Warn("resuming after children that already ended", "err", err)
		}
	}
	return ack()
}

// awaited is every child the parked round waits for: the one whose wait
// parked the session and those of the round's later wait calls (which the
// agent reports, agent.PendingWaits), which could not complete before it
// anyway. The parent wakes once all of them have ended, so children ending
// together wake it once.
func (r *run) awaited() []uuid.UUID {
	ids := r.spawner.Awaited()
	for _, agentID := range agent.PendingWaits(r.sess.History()) {
		if id, err := uuid.Parse(agentID); err == nil && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids
}

// allEnded reports whether every task in ids (children of parent) is
// final, and one of them. One Children read answers for all of them, so a
// wide fan-out does not cost a read per child at every child's end.
func (w *Worker) allEnded(ctx context.Context, parent uuid.UUID, ids []uuid.UUID) (bool, uuid.UUID) {
	if len(ids) == 0 {
		return false, uuid.Nil
	}
	kids, err := w.st.Children(ctx, store.ChildrenParams{ParentID: parent})
	if err != nil {
		return false, uuid.Nil
	}
	ended := make(map[uuid.UUID]bool, len(kids.Children))
	for _, c := range kids.Children {
		ended[c.ID] = c.State.Terminal()
	}
	for _, id := range ids {
		if !ended[id] {
			return false, uuid.Nil
		}
	}
	return true, ids[len(ids)-1]
}

// wakeParent publishes the resume of t's parent when the parent is parked
// waiting for t and every other child it waits for has ended too. Every
// worker that records the end of a child of that wait publishes the same
// message id, so one resume is enqueued.
func (w *Worker) wakeParent(ctx context.Context, t store.Task) error {
	if t.ParentID == uuid.Nil {
		return nil
	}
	p, err := w.st.GetTask(ctx, store.GetTaskParams{ID: t.ParentID})
	if err != nil || p.State != store.TaskWaiting {
		return err
	}
	wf, err := fleet.DecodeWaitingFor(p.WaitingFor)
	if err != nil {
		return fmt.Errorf("reading what parent %s waits for: %w", p.ID, err)
	}
	if !slices.Contains(wf.Children, t.ID) {
		return nil
	}
	if done, _ := w.allEnded(ctx, p.ID, wf.Children); !done {
		return nil
	}
	spec, err := fleet.DecodeSpec(p.Spec)
	if err != nil {
		return fmt.Errorf("parent %s: %w", p.ID, err)
	}
	return w.enqueueResume(ctx, p, spec, wf, t.ID)
}

// enqueueResume publishes the deduplicated resume of a parked task: to its
// worker when its workspace is local to that worker, else to its queue.
func (w *Worker) enqueueResume(ctx context.Context, parent store.Task, spec fleet.TaskSpec, wf fleet.WaitingFor, child uuid.UUID) error {
	msg := queue.TaskMessage{Type: queue.MsgResume, TaskID: parent.ID.String(), WaitID: wf.WaitID, ChildTaskID: child.String()}
	res, err := w.q.EnqueueResume(ctx, w.targetFor(parent, spec), msg)
	if err == nil && !res.Duplicate {
		w.metrics.resumes.Inc()
	}
	return err
}

// targetFor is where a task's messages go (taskops.Target).
func (w *Worker) targetFor(t store.Task, spec fleet.TaskSpec) queue.Target {
	return taskops.Target(t, spec)
}
