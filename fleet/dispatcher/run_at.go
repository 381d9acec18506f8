package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// A root task submitted with run_at (fleet.TaskSpec.RunAt) starts late:
// Submit stores it queued at once, so it can be read, listed and
// cancelled, but publishes no start message; it first records the start
// time in the store (store.DelayedStarts), under the task's id, before
// the task itself, so a crash between the two leaves a row to drop, never
// a queued task nobody will start. Every dispatcher looks for due starts
// each ScheduleInterval with its schedules (startDue): a due task still
// queued gets its start message (the message id "start:<task>" makes
// dispatchers publishing together one message), then its row is dropped.
// The rows live in the store, so a delayed start survives dispatcher
// restarts; one due while no dispatcher ran starts at the next pass.
//
// run_at is refused more than MaxRunAtPast in the past (a clock or a
// template gone wrong: omit it to start now) or more than MaxRunAtAhead
// ahead, on a spawned child, and in a schedule's spec (a schedule says
// when by its cron expression). A duplicate submission (its idempotency
// key seen before) keeps the first task's start time.

// MaxRunAtPast is how far in the past a run_at may be (clock skew); it
// then starts at once.
const MaxRunAtPast = 5 * time.Minute

// MaxRunAtAhead is how far ahead a run_at may be.
const MaxRunAtAhead = 366 * 24 * time.Hour

// checkRunAt checks spec's run_at at now.
func checkRunAt(spec fleet.TaskSpec, now time.Time) *fleet.FieldError {
	if spec.RunAt == nil {
		return nil
	}
	at := *spec.RunAt
	switch {
	case spec.ParentID != uuid.Nil:
		return &fleet.FieldError{Field: "spec.run_at", Reason: "is for root tasks only; a child starts when its parent spawns it"}
	case at.Before(now.Add(-MaxRunAtPast)):
		return &fleet.FieldError{Field: "spec.run_at", Reason: fmt.Sprintf("%s is in the past; omit run_at to start now", at.UTC().Format(time.RFC3339))}
	case at.After(now.Add(MaxRunAtAhead)):
		return &fleet.FieldError{Field: "spec.run_at", Reason: fmt.Sprintf("%s is more than %d days ahead; use a schedule (POST /v1/schedules) for later work", at.UTC().Format(time.RFC3339), int(MaxRunAtAhead.Hours()/24))}
	}
	return nil
}

// delayStarts checks the run_at of every spec of a batch, gives each
// delayed task its id and records its start time; it returns the ids
// whose start waits.
func (d *Dispatcher) delayStarts(ctx context.Context, specs []fleet.TaskSpec, params []store.CreateTaskParams) (map[uuid.UUID]bool, error) {
	now := time.Now()
	var delayed map[uuid.UUID]bool
	for i, s := range specs {
		if fe := checkRunAt(s, now); fe != nil {
			return nil, batchError(i, len(specs), fe)
		}
		if s.RunAt == nil || !s.RunAt.After(now) {
			continue
		}
		if params[i].ID == uuid.Nil {
			id, err := uuid.NewV7()
			if err != nil {
				return nil, err
			}
			params[i].ID = id
		}
		if err := d.store.PutDelayedStart(ctx, params[i].ID, *s.RunAt); err != nil {
			return nil, fmt.Errorf("dispatcher: recording the start time of tasks[%d]: %w", i, err)
		}
		if delayed == nil {
			delayed = map[uuid.UUID]bool{}
		}
		delayed[params[i].ID] = true
	}
	return delayed, nil
}

// waitingStarts is the set of subs' tasks whose start waits: those just
// delayed, and earlier tasks a duplicate submission found whose run_at
// has not come.
func waitingStarts(subs []Submission, delayed map[uuid.UUID]bool) map[uuid.UUID]bool {
	now := time.Now()
	for _, s := range subs {
		if s.Existing && waits(s.Task, now) {
			if delayed == nil {
				delayed = map[uuid.UUID]bool{}
			}
			delayed[s.Task.ID] = true
		}
	}
	return delayed
}

// waits reports whether t is queued with a run_at after now.
func waits(t store.Task, now time.Time) bool {
	if t.State != store.TaskQueued {
		return false
	}
	spec, err := fleet.DecodeSpec(t.Spec)
	return err == nil && spec.RunAt != nil && spec.RunAt.After(now)
}

// startDue publishes the start message of every delayed task due at now
// that is still queued, and drops the rows of those it started or that
// are gone, ended or cancelled.
func (d *Dispatcher) startDue(ctx context.Context, now time.Time) {
	due, err := d.store.DueDelayedStarts(ctx, now, 0)
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("listing delayed starts", "err", err)
		}
		return
	}
	for _, ds := range due {
		if err := d.startDelayed(ctx, ds, now); err != nil && ctx.Err() == nil {
			d.log.Warn("starting a delayed task", "task_id", ds.TaskID, "run_at", ds.RunAt, "err", err)
		}
	}
}

// startDelayed starts one due task; its row stays when the publish
// fails, for the next pass.
func (d *Dispatcher) startDelayed(ctx context.Context, ds store.DelayedStart, now time.Time) error {
	t, err := d.store.GetTask(ctx, store.GetTaskParams{ID: ds.TaskID})
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return err
	case t.State == store.TaskQueued:
		for _, r := range d.queue.SendBatch(ctx, []queue.Outgoing{taskops.StartMessage(t, now)}) {
			if r.Err != nil {
				d.metrics.enqueueErrors.Inc()
				return r.Err
			}
		}
	}
	return d.store.DeleteDelayedStart(ctx, ds.TaskID)
}
