package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// PutDelayedStart implements store.Store.
func (s *Store) PutDelayedStart(ctx context.Context, task uuid.UUID, runAt time.Time) error {
	return s.tx(ctx, "PutDelayedStart", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO delayed_starts (task_id, run_at) VALUES (?, ?)
ON CONFLICT (task_id) DO UPDATE SET run_at = excluded.run_at`, task.String(), store.Timestamp(runAt).UnixMicro())
		return err
	})
}

// DueDelayedStarts implements store.Store.
func (s *Store) DueDelayedStarts(ctx context.Context, by time.Time, limit int) ([]store.DelayedStart, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT task_id, run_at FROM delayed_starts WHERE run_at <= ?
ORDER BY run_at, task_id LIMIT ?`, by.UnixMicro(), store.DelayedLimit(limit))
	if err != nil {
		return nil, translate("DueDelayedStarts", err)
	}
	defer func() { _ = rows.Close() }()
	var out []store.DelayedStart
	for rows.Next() {
		var d store.DelayedStart
		var at int64
		if err := rows.Scan(&d.TaskID, &at); err != nil {
			return nil, translate("DueDelayedStarts", err)
		}
		d.RunAt = micros(at)
		out = append(out, d)
	}
	return out, translate("DueDelayedStarts", rows.Err())
}

// DeleteDelayedStart implements store.Store.
func (s *Store) DeleteDelayedStart(ctx context.Context, task uuid.UUID) error {
	return s.tx(ctx, "DeleteDelayedStart", func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM delayed_starts WHERE task_id = ?`, task.String())
		return err
	})
}
