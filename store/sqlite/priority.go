package sqlite

import (
	"context"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// SetQueuedPriority implements store.PrioritySetter.
func (s *Store) SetQueuedPriority(ctx context.Context, id uuid.UUID, priority int) (store.Task, error) {
	return s.casTask(ctx, "SetQueuedPriority", id, "queued (a root task)", `
UPDATE tasks SET priority = ?1, updated_at = ?2
WHERE id = ?3 AND state = 'queued' AND parent_id IS NULL
RETURNING `+taskCols, priority, s.stamp(), id.String())
}
