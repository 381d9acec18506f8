package taskops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Store is what the completer needs of the store.
type Store interface {
	GetTask(ctx context.Context, p store.GetTaskParams) (store.Task, error)
	TransitionTask(ctx context.Context, p store.TransitionTaskParams) (store.Task, error)
	Children(ctx context.Context, p store.ChildrenParams) (store.ChildrenResult, error)
	CancelSubtree(ctx context.Context, p store.CancelSubtreeParams) ([]store.CancelledTask, error)
}

// Queue is what the completer needs of the queue: publishing a routed
// message and asking a session to abort.
type Queue interface {
	Send(ctx context.Context, to queue.Target, msg queue.TaskMessage, msgID string) (queue.EnqueueResult, error)
	Control(ctx context.Context, tenant, sessionID string, req queue.ControlRequest) (queue.ControlReply, error)
}

// Completer is the one way a task ends: every terminal transition of the
// dispatcher and the workers goes through End (or CancelTree, for a
// subtree), which writes the end fenced by the state it comes from and
// then applies the one after-end rule (see AfterEnd). The zero value is
// not usable; Store and Queue are required.
type Completer struct {
	Store Store
	Queue Queue
	Log   *slog.Logger
	// AbortTimeout bounds each abort request of CancelTree (<= 0:
	// queue.DefaultControlTimeout).
	AbortTimeout time.Duration
	// Ended is called once for each end this completer wrote (a metric);
	// an end written by someone else (the store's compare-and-set lost)
	// is theirs to count. May be nil.
	Ended func(state store.TaskState)
	// Resumed is called for each parent resume this completer enqueued
	// that was not a duplicate. May be nil.
	Resumed func()
	// Announce, when set, publishes the end of a task whose End carries no
	// Announce of its own (the worker's SESSION_END for an end without a
	// run). Its error is returned in Ended.AnnounceErr.
	Announce func(ctx context.Context, t store.Task) error
}

// End describes one terminal transition; build it with a constructor
// (Succeeded, Failed, Cancelled, DeadLettered, BudgetCancelled, Orphaned,
// FailedAnyState) and add what the caller has.
type End struct {
	ID     uuid.UUID
	To     store.TaskState
	Reason string           // the task's error (a fleet.Reason*); "" for success
	Result fleet.TaskResult // stored as the task's result
	// WorkerID fences the end to a run: it applies only while the task is
	// running on that worker. "" ends the task from whatever active state
	// it is in.
	WorkerID string
	// Append is the run's held turns, written in the same transaction. If
	// the store refuses them as invalid the end is written without them.
	Append *store.AppendTurnsParams
	// NoChildren says the task has no children for sure, sparing the
	// after-end rule a store read.
	NoChildren bool
	// Announce publishes the end (overrides Completer.Announce).
	Announce func(ctx context.Context, t store.Task) error
	// Reopen, when it returns true, has put the task back to work (input
	// that came while it ended): the after-end rule is skipped, as the
	// task has not ended after all.
	Reopen func(ctx context.Context, t store.Task) bool
}

// Succeeded ends a run of workerID as succeeded.
func Succeeded(id uuid.UUID, workerID string, res fleet.TaskResult) End {
	return End{ID: id, To: store.TaskSucceeded, WorkerID: workerID, Result: res}
}

// Failed ends a run of workerID as failed with reason.
func Failed(id uuid.UUID, workerID, reason string, res fleet.TaskResult) End {
	return End{ID: id, To: store.TaskFailed, WorkerID: workerID, Reason: reason, Result: res}
}

// Cancelled ends a run of workerID as cancelled with reason (cancelled
// meanwhile, aborted over control, a budget).
func Cancelled(id uuid.UUID, workerID, reason string, res fleet.TaskResult) End {
	return End{ID: id, To: store.TaskCancelled, WorkerID: workerID, Reason: reason, Result: res}
}

// FailedAnyState fails a task from whatever active state it is in, with
// detail as its result's error: a task that cannot run (bad spec, corrupt
// message).
func FailedAnyState(id uuid.UUID, reason, detail string) End {
	return End{ID: id, To: store.TaskFailed, Reason: reason, Result: fleet.TaskResult{Error: detail}}
}

// DeadLettered fails the task of a message that exhausted its deliveries
// or was terminated.
func DeadLettered(id uuid.UUID, dl queue.DeadLetter) End {
	return FailedAnyState(id, fleet.ReasonDeadLetter, DeadLetterDetail(dl))
}

// BudgetCancelled cancels a task claimed by workerID before its session
// started, because the budget of label is spent (reason: the budget
// package's Reason).
func BudgetCancelled(id uuid.UUID, workerID, reason, label string) End {
	return Cancelled(id, workerID, reason, fleet.TaskResult{Error: "the budget of " + label + " is spent"})
}

// Orphaned cancels a queued or waiting task whose parent is cancelled: it
// can never start.
func Orphaned(id uuid.UUID) End {
	return End{ID: id, To: store.TaskCancelled, Reason: fleet.ReasonParentCancelled}
}

// Ended reports what End did.
type Ended struct {
	// Task is the task as the store has it afterwards: final, unless the
	// fence was lost to another owner (running elsewhere) or Reopen put it
	// back to work.
	Task store.Task
	// Moved: this call wrote the end.
	Moved bool
	// TurnsWritten: End.Append was written with the end.
	TurnsWritten bool
	// Reopened: End.Reopen put the task back to work.
	Reopened bool
	// AnnounceErr is the announcer's error; the end and its after-end rule
	// stand, but the caller may want to try the announcement again.
	AnnounceErr error
}

// End writes e and, when the task is final afterwards (ended by this call
// or, a lost compare-and-set, by someone else: the rule is idempotent),
// announces it and applies the after-end rule. The error is the store's:
// the end was not written and the task is as it was.
func (c *Completer) End(ctx context.Context, e End) (Ended, error) {
	var out Ended
	var err error
	if e.WorkerID != "" {
		out, err = c.endRun(ctx, e)
	} else {
		out, err = c.endAnyState(ctx, e)
	}
	if err != nil {
		return out, err
	}
	if out.Moved && c.Ended != nil {
		c.Ended(out.Task.State)
	}
	if !out.Task.State.Terminal() {
		return out, nil
	}
	out.AnnounceErr = c.announce(ctx, e, out.Task)
	if e.Reopen != nil && e.Reopen(ctx, out.Task) {
		out.Reopened = true
		return out, nil
	}
	c.afterEnd(ctx, out.Task, !e.NoChildren)
	return out, nil
}

func (c *Completer) announce(ctx context.Context, e End, t store.Task) error {
	switch {
	case e.Announce != nil:
		return e.Announce(ctx, t)
	case c.Announce != nil:
		return c.Announce(ctx, t)
	}
	return nil
}

// endRun writes the end of a run fenced by its worker. A lost fence reads
// the task as it is now.
func (c *Completer) endRun(ctx context.Context, e End) (Ended, error) {
	p, err := transition(e, store.TaskRunning)
	if err != nil {
		return Ended{}, err
	}
	p.Append = e.Append
	t, err := c.Store.TransitionTask(ctx, p)
	if err != nil && p.Append != nil && errors.Is(err, store.ErrInvalid) {
		c.log().Warn("the store refused the run's last turns; ending the task without them", "task_id", e.ID, "err", err)
		p.Append = nil
		t, err = c.Store.TransitionTask(ctx, p)
	}
	switch {
	case err == nil:
		return Ended{Task: t, Moved: true, TurnsWritten: p.Append != nil}, nil
	case errors.Is(err, store.ErrConflict):
		// Cancelled meanwhile, or taken over: the store's state stands.
		t, err = c.Store.GetTask(ctx, store.GetTaskParams{ID: e.ID})
		return Ended{Task: t}, err
	}
	return Ended{}, err
}

// anyStateAttempts bounds the compare-and-set loop of endAnyState against
// a task that keeps changing state under it.
const anyStateAttempts = 5

// endAnyState moves the task from whatever active state it is in; a task
// already final is left as it is (Moved false).
func (c *Completer) endAnyState(ctx context.Context, e End) (Ended, error) {
	for range anyStateAttempts {
		t, err := c.Store.GetTask(ctx, store.GetTaskParams{ID: e.ID})
		if err != nil {
			return Ended{}, err
		}
		if t.State.Terminal() {
			return Ended{Task: t}, nil
		}
		p, err := transition(e, t.State)
		if err != nil {
			return Ended{}, err
		}
		t, err = c.Store.TransitionTask(ctx, p)
		if err == nil {
			return Ended{Task: t, Moved: true}, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return Ended{}, err
		}
	}
	return Ended{}, fmt.Errorf("task %s keeps changing state; could not end it as %s", e.ID, e.To)
}

// transition is the store write of e from state from.
func transition(e End, from store.TaskState) (store.TransitionTaskParams, error) {
	if !e.To.Terminal() {
		return store.TransitionTaskParams{}, fmt.Errorf("taskops: End to %q, which is not a final state", e.To)
	}
	body, err := json.Marshal(e.Result)
	if err != nil {
		return store.TransitionTaskParams{}, err
	}
	return store.TransitionTaskParams{ID: e.ID, From: from, To: e.To, WorkerID: e.WorkerID,
		Result: body, Error: e.Reason}, nil
}

func (c *Completer) log() *slog.Logger {
	if c.Log == nil {
		return slog.Default()
	}
	return c.Log
}
