package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Schedules holds cron schedules: task specs a dispatcher submits on a
// cadence (fleet/dispatcher schedules.go). The store keeps each
// schedule's next fire time; firing a tick is CreateTask with the
// schedule's idempotency key of that tick, then AdvanceSchedule, a
// compare-and-set on the fire time, so dispatchers firing together
// create one task per tick.
type Schedules interface {
	// CreateSchedule stores a schedule; its ID is generated when Nil.
	CreateSchedule(ctx context.Context, p CreateScheduleParams) (Schedule, error)
	// GetSchedule returns one schedule or ErrNotFound.
	GetSchedule(ctx context.Context, id uuid.UUID) (Schedule, error)
	// ListSchedules returns the schedules p selects, oldest first.
	ListSchedules(ctx context.Context, p ListSchedulesParams) ([]Schedule, error)
	// AdvanceSchedule moves a schedule's next fire time from p.From to
	// p.To and stamps LastFireAt with p.From: ErrConflict when its next
	// fire time is no longer p.From (another dispatcher advanced it),
	// ErrNotFound when it is gone.
	AdvanceSchedule(ctx context.Context, p AdvanceScheduleParams) (Schedule, error)
	// PauseSchedule sets Paused (and, when resuming, the next fire time
	// next, unless zero); ErrNotFound when there is none.
	PauseSchedule(ctx context.Context, id uuid.UUID, paused bool, next time.Time) (Schedule, error)
	// DeleteSchedule deletes a schedule; ErrNotFound when there is none.
	// The tasks it submitted stay.
	DeleteSchedule(ctx context.Context, id uuid.UUID) error
}

// Schedule is a cron schedule of a task spec, owned by a tenant and the
// principal that created it (its tasks are submitted as that principal).
type Schedule struct {
	ID         uuid.UUID
	Name       string
	Cron       string // a standard 5-field cron expression or a descriptor (@hourly)
	Spec       json.RawMessage
	Tenant     string
	CreatedBy  string
	Paused     bool
	NextFireAt time.Time
	LastFireAt time.Time // zero until its first tick
	CreatedAt  time.Time
}

// CreateScheduleParams describes a new schedule; Cron, Spec (valid JSON),
// Tenant and NextFireAt are required.
type CreateScheduleParams struct {
	ID         uuid.UUID
	Name       string
	Cron       string
	Spec       json.RawMessage
	Tenant     string
	CreatedBy  string
	NextFireAt time.Time
}

// ListSchedulesParams filters schedules; zero fields do not filter.
type ListSchedulesParams struct {
	// Tenants, when not nil, keeps these tenants' schedules only.
	Tenants []string
	// DueBy, when set, keeps the schedules not paused whose next fire time
	// is at or before it.
	DueBy time.Time
}

// AdvanceScheduleParams moves a schedule past the tick From.
type AdvanceScheduleParams struct {
	ID       uuid.UUID
	From, To time.Time
}

// PrepareCreateSchedule checks p and fills its ID.
func PrepareCreateSchedule(p CreateScheduleParams) (CreateScheduleParams, error) {
	switch {
	case p.Cron == "":
		return p, invalidf("Cron", "is required")
	case !json.Valid(p.Spec):
		return p, invalidf("Spec", "must be valid JSON")
	case p.Tenant == "":
		return p, invalidf("Tenant", "is required")
	case p.NextFireAt.IsZero():
		return p, invalidf("NextFireAt", "is required")
	}
	if p.ID == uuid.Nil {
		id, err := uuid.NewV7()
		if err != nil {
			return p, err
		}
		p.ID = id
	}
	return p, nil
}
