package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Why a run's session was stopped from outside its loop.
const (
	stopShutdown  = "shutdown"  // the worker drains: hand the task back
	stopCrash     = "crash"     // Crash: write nothing
	stopAborted   = "aborted"   // a control abort: the task ends cancelled
	stopCancelled = "cancelled" // the store says the task was cancelled
	stopLost      = "lost"      // another worker owns the task now
	stopWallTime  = "limit_wall_time"
	stopTokens    = "limit_max_tokens"
	stopCost      = "limit_max_cost"
)

// Task error reasons written by workers.
const (
	ReasonDeadLetter     = "dead_letter"
	ReasonCorruptMessage = "corrupt_message"
	ReasonBadSpec        = "bad_spec"
	ReasonNotAllowed     = "not_allowed"
	ReasonEnvironment    = "environment"
	ReasonModelError     = "model_error"
	ReasonTurnLimit      = "turn_limit"
	ReasonAborted        = "aborted"
	ReasonParentEnded    = "parent_ended"
	// ReasonParentCancelled: the task was created under a parent that was
	// cancelled (its session spawned it before its abort arrived), so the
	// store refused its claim and the worker cancelled it unstarted.
	ReasonParentCancelled = "parent_cancelled"
)

// run is one claimed task whose session runs on this worker. The handler
// goroutine owns it; abort and the control handler may be called from any
// goroutine.
type run struct {
	w    *Worker
	d    *queue.Delivery
	task store.Task // as claimed
	spec TaskSpec
	log  *slog.Logger

	env     execenv.Environment
	ws      *workspace // nil for SSH
	sess    *agent.Session
	spawner *spawner
	pump    *eventPump
	rec     *turnRecorder
	row     store.Session // the session row read or created by prepare

	mu       sync.Mutex // guards stop
	stop     string     // why abort was called; "" while not aborted
	aborting bool
}

// handle settles one delivery: it decodes the message, claims the task,
// runs its session and maps the outcome to the store and the queue.
func (w *Worker) handle(d *queue.Delivery) {
	if d.DecodeErr != nil {
		w.failCorrupt(d)
		return
	}
	id, err := uuid.Parse(d.Message.TaskID)
	if err != nil {
		w.failCorrupt(d)
		return
	}
	w.claimAndRun(w.runCtx, d, id)
}

// claimAndRun claims the task (compare-and-set) and runs it. The claim
// comes first, without reading the task: a claim that fails says why
// (claimFailed reads the task then), and the common case costs one store
// round trip instead of two.
func (w *Worker) claimAndRun(ctx context.Context, d *queue.Delivery, id uuid.UUID) {
	from := []store.TaskState{store.TaskQueued}
	if d.Message.Type != queue.MsgStart {
		from = append(from, store.TaskWaiting)
	}
	claimed, err := w.st.ClaimTask(ctx, store.ClaimTaskParams{ID: id, WorkerID: w.cfg.ID, From: from,
		StaleBefore: w.clock.Now().Add(-w.cfg.StaleAfter)})
	if err != nil {
		w.claimFailed(ctx, d, id, err)
		return
	}
	var spec TaskSpec
	if err := json.Unmarshal(claimed.Spec, &spec); err != nil {
		w.failTask(ctx, d, claimed, ReasonBadSpec, fmt.Sprintf("the task spec is not valid JSON: %v", err))
		return
	}
	if spec.MaxLiveChildren == 0 {
		spec.MaxLiveChildren = w.cfg.MaxLiveChildren
	}
	if !d.Published.IsZero() {
		w.metrics.claimLatency.Observe(time.Since(d.Published).Seconds())
	}
	r := &run{w: w, d: d, task: claimed, spec: spec.WithDefaults(),
		log: w.log.With("task_id", id, "root_task_id", claimed.RootID, "delivery", d.NumDelivered)}
	w.register(r)
	defer w.unregister(r)
	r.execute(ctx)
}

// claimFailed decides what to do with a message whose task could not be
// claimed: it does not exist (term), another worker owns it (try later, it
// may die), it ended (redo what follows an end, ack), it is parked and this
// is its start message (ack), its parent was cancelled (cancel it, ack), or
// the store failed (retry).
func (w *Worker) claimFailed(ctx context.Context, d *queue.Delivery, id uuid.UUID, err error) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		w.settle(d, func() error { return d.Term(ctx, "task "+id.String()+" does not exist") })
		return
	case !errors.Is(err, store.ErrConflict):
		w.log.Warn("claiming task", "task_id", id, "err", err)
		w.settle(d, func() error { return d.Nak(ctx, w.backoff(d.NumDelivered)) })
		return
	}
	now, gerr := w.st.GetTask(ctx, store.GetTaskParams{ID: id})
	switch {
	case gerr != nil:
		w.settle(d, func() error { return d.Nak(ctx, w.backoff(d.NumDelivered)) })
	case now.State.Terminal():
		w.afterEnd(ctx, now) // idempotent: redo what a crash may have cut short
		w.settle(d, func() error { return d.Ack(ctx) })
	case now.State == store.TaskWaiting && d.Message.Type == queue.MsgStart:
		w.settle(d, func() error { return d.Ack(ctx) }) // parked: its resume will come
	case (now.State == store.TaskQueued || now.State == store.TaskWaiting) && w.parentCancelled(ctx, now):
		w.cancelOrphan(ctx, d, now)
	case now.State == store.TaskRunning && now.WorkerID == w.cfg.ID && w.running(id):
		// A redelivery of a message this worker is working on: keep it alive.
		w.settle(d, func() error { return d.Nak(ctx, w.cfg.StaleAfter) })
	default:
		// Running elsewhere with a fresh heartbeat: look again once it would be stale.
		w.settle(d, func() error { return d.Nak(ctx, w.cfg.StaleAfter) })
	}
}

// parentCancelled reports whether the task's direct parent is cancelled,
// the reason the store refuses to claim a task that is otherwise claimable.
func (w *Worker) parentCancelled(ctx context.Context, t store.Task) bool {
	if t.ParentID == uuid.Nil {
		return false
	}
	p, err := w.st.GetTask(ctx, store.GetTaskParams{ID: t.ParentID})
	return err == nil && p.State == store.TaskCancelled
}

// cancelOrphan cancels a task that can never start because its parent is
// cancelled (compare-and-set from the state it was read in) and acks its
// message. A lost compare-and-set leaves the message for a redelivery,
// which looks again.
func (w *Worker) cancelOrphan(ctx context.Context, d *queue.Delivery, t store.Task) {
	if w.crash.Load() {
		d.Abandon()
		return
	}
	ended, err := w.st.TransitionTask(ctx, store.TransitionTaskParams{ID: t.ID, From: t.State, To: store.TaskCancelled,
		Error: ReasonParentCancelled})
	if err != nil {
		w.log.Warn("cancelling a task whose parent is cancelled", "task_id", t.ID, "parent_id", t.ParentID, "err", err)
		w.settle(d, func() error { return d.Nak(ctx, w.backoff(d.NumDelivered)) })
		return
	}
	w.afterEnd(ctx, ended)
	w.settle(d, func() error { return d.Ack(ctx) })
}

// settle runs one settling call unless the worker crashed, logging failures.
func (w *Worker) settle(d *queue.Delivery, f func() error) {
	if w.crash.Load() {
		d.Abandon()
		return
	}
	if err := f(); err != nil && !errors.Is(err, queue.ErrSettled) {
		w.log.Warn("settling delivery", "task_id", d.TaskID, "err", err)
	}
}

// failCorrupt records a message whose body cannot be decoded as failed (when
// its header names a task) and terminates it.
func (w *Worker) failCorrupt(d *queue.Delivery) {
	ctx := w.runCtx
	reason := fmt.Sprintf("%s: %v", ReasonCorruptMessage, d.DecodeErr)
	if d.DecodeErr == nil {
		reason = fmt.Sprintf("%s: task id %q is not a UUID", ReasonCorruptMessage, d.Message.TaskID)
	}
	if id, err := uuid.Parse(d.TaskID); err == nil {
		if err := w.forceFail(ctx, id, ReasonCorruptMessage, reason); err != nil {
			w.log.Warn("recording a corrupt message", "task_id", id, "err", err)
		}
	}
	w.log.Warn("terminating a corrupt task message", "task_id", d.TaskID, "reason", reason)
	w.settle(d, func() error { return d.Term(ctx, reason) })
}

// failTask moves a task that cannot run to failed and terminates its message.
func (w *Worker) failTask(ctx context.Context, d *queue.Delivery, task store.Task, reason, detail string) {
	if err := w.forceFail(ctx, task.ID, reason, detail); err != nil {
		w.log.Warn("failing task", "task_id", task.ID, "err", err)
	}
	w.afterEndByID(ctx, task.ID)
	w.settle(d, func() error { return d.Term(ctx, reason+": "+detail) })
}

// forceFail moves a task from whatever active state it is in to failed with
// reason, storing detail in the result. A task already final is left alone.
func (w *Worker) forceFail(ctx context.Context, id uuid.UUID, reason, detail string) error {
	if w.crash.Load() {
		return errCrashed
	}
	return failFromAnyState(ctx, w.st, id, reason, detail)
}

// failFromAnyState is the compare-and-set loop behind forceFail and the
// dead-letter handler.
func failFromAnyState(ctx context.Context, st store.Store, id uuid.UUID, reason, detail string) error {
	result, _ := json.Marshal(TaskResult{Success: false, Error: detail})
	for range 5 {
		t, err := st.GetTask(ctx, store.GetTaskParams{ID: id})
		if err != nil {
			return err
		}
		if t.State.Terminal() {
			return nil
		}
		_, err = st.TransitionTask(ctx, store.TransitionTaskParams{ID: id, From: t.State, To: store.TaskFailed,
			Error: reason, Result: result})
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("fleet: task %s keeps changing state; could not mark it failed", id)
}

// abort stops the session for reason (the first reason wins). It returns
// at once; the handler sees the reason when the session returns.
func (r *run) abort(reason string) {
	r.mu.Lock()
	if r.stop == "" {
		r.stop = reason
	}
	sess, already := r.sess, r.aborting
	r.aborting = r.aborting || sess != nil
	r.mu.Unlock()
	if sess != nil && !already {
		go sess.Abort()
	}
}

// stopReason is why the session was aborted, "" if it was not.
func (r *run) stopReason() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stop
}

// isRetryable reports model errors worth another delivery, and the delay
// the provider asked for (0 when it did not say).
func isRetryable(err error) (bool, time.Duration) {
	var le *llm.Error
	if !errors.As(err, &le) {
		return false, 0
	}
	switch le.Kind {
	case llm.ErrRateLimited, llm.ErrOverloaded, llm.ErrServer, llm.ErrTransport, llm.ErrStreamInterrupted:
		return true, le.RetryAfter
	}
	return false, 0
}
