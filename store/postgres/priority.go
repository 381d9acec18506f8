package postgres

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentfleet/agentfleet/store"
)

// SetQueuedPriority implements store.PrioritySetter.
func (s *Store) SetQueuedPriority(ctx context.Context, id uuid.UUID, priority int) (store.Task, error) {
	const op = "SetQueuedPriority"
	t, err := scanTask(s.pool.QueryRow(ctx, `
UPDATE tasks SET priority = $1, updated_at = $2
WHERE id = $3 AND (state = 'queued') IS TRUE AND parent_id IS NULL
RETURNING `+taskCols, priority, s.stamp(), id))
	if errors.Is(err, pgx.ErrNoRows) {
		return t, s.whyNot(ctx, op, id, "queued (a root task)")
	}
	return t, translate(op, err)
}
