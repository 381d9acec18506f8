package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/google/uuid"
	"github.com/robfig/cron/v3"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/internal/identity"
	"github.com/agentfleet/agentfleet/store"
)

// Schedules submit a task spec on a cron cadence. The store keeps each
// schedule's next fire time; every dispatcher looks for due schedules each
// ScheduleInterval and fires each due tick by submitting the spec with the
// idempotency key "schedule:<id>:<tick>" (scheduleKey), then advancing
// the next fire time by compare-and-set. Dispatchers firing one tick
// together submit the same key, so the tick yields one task and one start
// message (the key and the message id collapse the duplicates); one of
// them advances the schedule. Ticks missed while no dispatcher ran fire
// once, not as a backlog (under the first missed tick's key): a nightly
// job that missed three nights runs once. Cron expressions are in UTC.
//
// The tasks are submitted as the schedule's creator, in its tenant, with
// the dispatcher's current policy (a spec the policy now refuses fails
// its tick; the error is logged and the schedule moves on), and carry the
// label "schedule" with the schedule's id.

// DefaultScheduleInterval is how often a dispatcher looks for due
// schedules when Config.ScheduleInterval is zero.
const DefaultScheduleInterval = time.Second

// ScheduleLabel is the label a scheduled task carries: the schedule's id.
const ScheduleLabel = "schedule"

// cronParser reads standard 5-field expressions and descriptors.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// parseCron parses a schedule's cron expression.
func parseCron(expr string) (cron.Schedule, error) {
	s, err := cronParser.Parse(expr)
	if err != nil {
		return nil, &fleet.FieldError{Field: "cron", Reason: fmt.Sprintf("%q is not a cron expression (%v); use 5 fields (minute hour day-of-month month day-of-week, UTC) or a descriptor such as @daily or @every 1h", expr, err)}
	}
	return s, nil
}

// scheduleKey is the idempotency key of one tick of a schedule.
func scheduleKey(id uuid.UUID, tick time.Time) string {
	return "schedule:" + id.String() + ":" + tick.UTC().Format(time.RFC3339)
}

// CreateSchedule checks spec as a submission would (for its tenant,
// already assigned) and stores the schedule, owned by the principal of
// ctx.
func (d *Dispatcher) CreateSchedule(ctx context.Context, name, expr string, spec fleet.TaskSpec, paused bool) (store.Schedule, error) {
	sched, err := parseCron(expr)
	if err != nil {
		return store.Schedule{}, err
	}
	if spec.RunAt != nil {
		return store.Schedule{}, &fleet.FieldError{Field: "spec.run_at", Reason: "must be empty: a schedule's tasks start at its ticks"}
	}
	if spec.IdempotencyKey != "" {
		return store.Schedule{}, &fleet.FieldError{Field: "spec.idempotency_key", Reason: "must be empty: each tick of a schedule has its own key"}
	}
	if _, err := d.prepare(spec); err != nil {
		if fe, ok := errors.AsType[*fleet.FieldError](err); ok {
			return store.Schedule{}, fe.WithPrefix("spec")
		}
		return store.Schedule{}, err
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return store.Schedule{}, err
	}
	s, err := d.store.CreateSchedule(ctx, store.CreateScheduleParams{Name: name, Cron: expr, Spec: raw, Tenant: spec.Tenant,
		CreatedBy: submitter(ctx), NextFireAt: sched.Next(time.Now().UTC())})
	if err != nil || !paused {
		return s, err
	}
	return d.store.PauseSchedule(ctx, s.ID, true, time.Time{})
}

// PauseSchedule pauses or resumes a schedule; a resumed one fires next at
// its first tick from now.
func (d *Dispatcher) PauseSchedule(ctx context.Context, s store.Schedule, paused bool) (store.Schedule, error) {
	var next time.Time
	if !paused {
		sched, err := parseCron(s.Cron)
		if err != nil {
			return store.Schedule{}, err
		}
		next = sched.Next(time.Now().UTC())
	}
	return d.store.PauseSchedule(ctx, s.ID, paused, next)
}

// runSchedules fires due schedules every interval until ctx ends.
func (d *Dispatcher) runSchedules(ctx context.Context) {
	every := d.cfg.ScheduleInterval
	if every == 0 {
		every = DefaultScheduleInterval
	}
	if every < 0 {
		return
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		now := time.Now().UTC()
		d.fireDue(ctx, now)
		d.startDue(ctx, now) // run_at.go
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// fireDue fires every schedule due at now.
func (d *Dispatcher) fireDue(ctx context.Context, now time.Time) {
	due, err := d.store.ListSchedules(ctx, store.ListSchedulesParams{DueBy: now})
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("listing due schedules", "err", err)
		}
		return
	}
	for _, s := range due {
		if err := d.fire(ctx, s, now); err != nil && ctx.Err() == nil {
			d.log.Warn("firing a schedule", "schedule_id", s.ID, "tick", s.NextFireAt, "err", err)
		}
	}
}

// fire submits s's due tick (as its creator, under the tick's key) and
// advances s to its next tick after now. A lost advance means another
// dispatcher fired the tick too: the key made both submissions one task.
func (d *Dispatcher) fire(ctx context.Context, s store.Schedule, now time.Time) error {
	sched, err := parseCron(s.Cron)
	if err != nil {
		return err
	}
	tick := s.NextFireAt
	spec, err := fleet.DecodeSpec(s.Spec)
	if err == nil {
		spec.IdempotencyKey = scheduleKey(s.ID, tick)
		spec.Tenant = s.Tenant
		labels := map[string]string{ScheduleLabel: s.ID.String()}
		maps.Copy(labels, spec.Labels)
		spec.Labels = labels
		as := identity.WithPrincipal(ctx, identity.Principal{ID: s.CreatedBy})
		_, err = d.Submit(as, []fleet.TaskSpec{spec})
	}
	var enq *EnqueueError
	if err != nil && (errors.As(err, &enq) || store.IsRetryable(err)) {
		return err // the tick stays due: the next pass submits it again, once
	}
	_, aerr := d.store.AdvanceSchedule(ctx, store.AdvanceScheduleParams{ID: s.ID, From: tick, To: sched.Next(now)})
	if aerr != nil && !errors.Is(aerr, store.ErrConflict) && !errors.Is(aerr, store.ErrNotFound) {
		return aerr
	}
	return err
}

func (d *Dispatcher) schedules() store.Schedules { return d.store }
