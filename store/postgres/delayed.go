package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// PutDelayedStart implements store.Store.
func (s *Store) PutDelayedStart(ctx context.Context, task uuid.UUID, runAt time.Time) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO delayed_starts (task_id, run_at) VALUES ($1, $2)
ON CONFLICT (task_id) DO UPDATE SET run_at = excluded.run_at`, task, store.Timestamp(runAt))
	return translate("PutDelayedStart", err)
}

// DueDelayedStarts implements store.Store.
func (s *Store) DueDelayedStarts(ctx context.Context, by time.Time, limit int) ([]store.DelayedStart, error) {
	rows, err := s.pool.Query(ctx, `SELECT task_id, run_at FROM delayed_starts WHERE run_at <= $1
ORDER BY run_at, task_id LIMIT $2`, by, store.DelayedLimit(limit))
	if err != nil {
		return nil, translate("DueDelayedStarts", err)
	}
	defer rows.Close()
	var out []store.DelayedStart
	for rows.Next() {
		var d store.DelayedStart
		if err := rows.Scan(&d.TaskID, &d.RunAt); err != nil {
			return nil, translate("DueDelayedStarts", err)
		}
		d.RunAt = d.RunAt.UTC()
		out = append(out, d)
	}
	return out, translate("DueDelayedStarts", rows.Err())
}

// DeleteDelayedStart implements store.Store.
func (s *Store) DeleteDelayedStart(ctx context.Context, task uuid.UUID) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM delayed_starts WHERE task_id = $1`, task)
	return translate("DeleteDelayedStart", err)
}
