package store

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// DelayedStarts holds the start times of tasks submitted with run_at
// (fleet/dispatcher run_at.go): such a task is stored queued, but its
// start message waits for a dispatcher to find it due here. The row is
// written before the task, so a task never exists queued without either
// a message or a row; a row whose task is missing or no longer queued is
// dropped when due.
type DelayedStarts interface {
	// PutDelayedStart records that task starts at runAt (replacing an
	// earlier time).
	PutDelayedStart(ctx context.Context, task uuid.UUID, runAt time.Time) error
	// DueDelayedStarts returns at most limit (0: 100) delayed starts due
	// at or before by, earliest first.
	DueDelayedStarts(ctx context.Context, by time.Time, limit int) ([]DelayedStart, error)
	// DeleteDelayedStart drops the row of task; none is not an error.
	DeleteDelayedStart(ctx context.Context, task uuid.UUID) error
}

// DelayedStart is a task waiting for its start time.
type DelayedStart struct {
	TaskID uuid.UUID
	RunAt  time.Time
}

// DelayedStartLimit is the page DueDelayedStarts returns for limit 0.
const DelayedStartLimit = 100

// DelayedLimit is limit, or DelayedStartLimit when not positive.
func DelayedLimit(limit int) int {
	if limit <= 0 {
		return DelayedStartLimit
	}
	return limit
}
