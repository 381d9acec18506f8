package dispatcher

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/store"
)

// A follow-up of a task that succeeded or failed reopens it (Reopen): the
// input is stored (taskops.StoreInput), the task goes back to queued
// through the completer's fenced transition (taskops.Completer.Reopen)
// and the router's message runs it on a worker, which resumes its session
// from the stored turns, restores its workspace from its delivered branch,
// answers the input, re-runs the checks and delivers again; its end goes
// through the completer like any end. Each reopening is a round of the
// task: the first run is round 1, and round n+1 is the n-th stored input
// of a root task (only a reopening stores a root task's input). A task
// takes at most limits.max_followups of them (fleet.Limits.Followups);
// its session's limits (turns, tokens, cost) bound all rounds together,
// and a task whose session has spent its cost or token limit takes no
// more (ErrLimitSpent).
// A cancelled task stays final.

// ErrFollowupLimit: the task has used every follow-up its spec allows.
var ErrFollowupLimit = fmt.Errorf("dispatcher: no follow-up left: %w", store.ErrConflict)

// Reopen gives the ended task t (succeeded or failed) the input message
// and queues it again; it returns the round the input starts.
func (d *Dispatcher) Reopen(ctx context.Context, t store.Task, message string) (round int, err error) {
	spec, err := fleet.DecodeSpec(t.Spec)
	if err != nil {
		return 0, fmt.Errorf("task %s: %w", t.ID, err)
	}
	done, ended, err := d.rounds(ctx, t)
	if err != nil {
		return 0, err
	}
	if !ended {
		ended, err = d.ancestorConcluded(ctx, t)
		if err != nil {
			return 0, err
		}
	}
	if ended {
		return 0, fmt.Errorf("%w: task %s; submit a new task to go on", ErrTaskConcluded, t.ID)
	}
	if limit := spec.Limits.Followups(); done-1 >= limit {
		return 0, fmt.Errorf("%w: task %s was followed up %d times, its limits.max_followups; submit a new task to go on", ErrFollowupLimit, t.ID, limit)
	}
	if err := d.limitsLeft(ctx, t, spec.Limits); err != nil { // reopen_limits.go
		return 0, err
	}
	name, err := taskops.StoreInput(ctx, d.store, t.ID, message)
	if err != nil {
		return 0, fmt.Errorf("storing the follow-up of task %s: %w", t.ID, err)
	}
	if _, err := d.ends.Reopen(ctx, t, name); err != nil {
		if errors.Is(err, taskops.ErrCancelledTask) {
			return 0, fmt.Errorf("%w: task %s was cancelled meanwhile", ErrTaskNotRunning, t.ID)
		}
		return 0, err
	}
	d.recordRound(ctx, t, name) // rounds.go
	return done + 1, nil
}

// rounds counts the rounds t has had: its first run and one per stored
// input; concluded reports that its pull request was merged or closed
// (forges_follow.go).
func (d *Dispatcher) rounds(ctx context.Context, t store.Task) (n int, concludedPull bool, err error) {
	arts, err := d.store.ListArtifacts(ctx, store.ListArtifactsParams{TaskID: t.ID})
	if err != nil {
		return 0, false, err
	}
	n = 1
	for _, a := range arts {
		if a.Kind == taskops.InputKind {
			n++
		}
	}
	return n, concluded(arts), nil
}

// ancestorConcluded reports whether a task above t (its parent, theirs, up
// to the root) has a pull request that was merged or closed: the tree's
// work is then done, its repository in the fleet git store is released
// (gitstore_lease.go), and a follow-up of one of its subagents would run
// without it and deliver nowhere.
func (d *Dispatcher) ancestorConcluded(ctx context.Context, t store.Task) (bool, error) {
	for id := t.ParentID; id != uuid.Nil; {
		o, err := taskOutcome(ctx, d.store, id)
		if err != nil {
			return false, err
		}
		if o.Outcome != "" {
			return true, nil
		}
		p, err := d.store.GetTask(ctx, store.GetTaskParams{ID: id})
		if err != nil {
			return false, fmt.Errorf("reading task %s, an ancestor of %s: %w", id, t.ID, err)
		}
		id = p.ParentID
	}
	return false, nil
}
