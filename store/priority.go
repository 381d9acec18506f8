package store

import (
	"context"

	"github.com/google/uuid"
)

// PrioritySetter is implemented by the stores (SQLite and Postgres) that
// can change the priority of a queued task; the bulk action set_priority
// asks for it. It is not part of Store so that wrappers need not follow.
type PrioritySetter interface {
	// SetQueuedPriority sets the priority of task id while it is queued
	// and a root task, and returns it. ErrConflict when it is not queued
	// (it started or ended meanwhile) or is a child; ErrNotFound when it
	// does not exist.
	SetQueuedPriority(ctx context.Context, id uuid.UUID, priority int) (Task, error)
}
