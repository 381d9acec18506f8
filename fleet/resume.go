package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// WaitingFor is what a parked (waiting) task waits for, stored as
// store.Task.WaitingFor.
type WaitingFor struct {
	// WaitID names this park; it makes the resume's message id
	// deterministic (queue.ResumeMsgID), so children ending together wake
	// the parent once. It is the claim attempt that parked.
	WaitID string `json:"wait_id"`
	// Children are the child task ids whose end wakes the task.
	Children []uuid.UUID `json:"children"`
}

// park persists the parked session's state: the task becomes waiting with
// what it waits for, its message is acked and its slot freed. The history
// is in the store already (every turn is recorded before the loop goes on).
// A child that ended between the wait and the state change is caught by
// checking the children after it.
func (r *run) park(ctx context.Context) {
	w := r.w
	ctx = context.WithoutCancel(ctx)
	wf := WaitingFor{WaitID: strconv.Itoa(r.task.Attempts), Children: r.spawner.awaited()}
	body, _ := json.Marshal(wf)
	_, err := w.st.TransitionTask(ctx, store.TransitionTaskParams{ID: r.task.ID, From: store.TaskRunning,
		To: store.TaskWaiting, WorkerID: w.cfg.ID, WaitingFor: body})
	if err != nil {
		if errors.Is(err, store.ErrConflict) { // cancelled meanwhile
			w.settle(r.d, func() error { return r.d.Ack(ctx) })
			return
		}
		r.log.Warn("parking; handing back", "err", err)
		r.giveBack(ctx, w.backoff(r.d.NumDelivered))
		return
	}
	w.metrics.parks.Inc()
	r.log.Debug("parked", "waiting_for", wf.Children)
	for _, c := range wf.Children {
		ct, err := w.st.GetTask(ctx, store.GetTaskParams{ID: c})
		if err == nil && ct.State.Terminal() {
			if err := w.enqueueResume(ctx, r.task, r.spec, wf, c); err != nil {
				r.log.Warn("resuming after a child that already ended", "err", err)
			}
			break
		}
	}
	w.settle(r.d, func() error { return r.d.Ack(ctx) })
}

// wakeParent publishes the resume of t's parent when the parent is parked
// waiting for t. Every worker that records the end of a child of that wait
// publishes the same message id, so one resume is enqueued.
func (w *Worker) wakeParent(ctx context.Context, t store.Task) error {
	if t.ParentID == uuid.Nil {
		return nil
	}
	p, err := w.st.GetTask(ctx, store.GetTaskParams{ID: t.ParentID})
	if err != nil || p.State != store.TaskWaiting {
		return err
	}
	var wf WaitingFor
	if err := json.Unmarshal(p.WaitingFor, &wf); err != nil || !slices.Contains(wf.Children, t.ID) {
		return nil
	}
	var spec TaskSpec
	_ = json.Unmarshal(p.Spec, &spec)
	return w.enqueueResume(ctx, p, spec.WithDefaults(), wf, t.ID)
}

// enqueueResume publishes the deduplicated resume of a parked task: to its
// worker when its workspace is local to that worker, else to its queue.
func (w *Worker) enqueueResume(ctx context.Context, parent store.Task, spec TaskSpec, wf WaitingFor, child uuid.UUID) error {
	if w.crash.Load() {
		return errCrashed
	}
	msg := queue.TaskMessage{Type: queue.MsgResume, TaskID: parent.ID.String(), WaitID: wf.WaitID, ChildTaskID: child.String()}
	res, err := w.q.EnqueueResume(ctx, w.targetFor(parent, spec), msg)
	if err == nil && !res.Duplicate {
		w.metrics.resumes.Inc()
	}
	return err
}

// targetFor is where a task's messages go: its worker's own subject when it
// runs in a local workspace that is not shared, else its queue.
func (w *Worker) targetFor(t store.Task, spec TaskSpec) queue.Target {
	if pinned(spec) && t.WorkerID != "" {
		return queue.ToWorker(t.WorkerID)
	}
	q := t.Queue
	if q == "" {
		q = spec.Queue
	}
	return queue.ToQueue(q)
}

// pinned reports whether a task must run on the worker holding its files.
func pinned(spec TaskSpec) bool {
	return (spec.Environment.Kind == "" || spec.Environment.Kind == EnvLocal) && !spec.Environment.Shared
}
