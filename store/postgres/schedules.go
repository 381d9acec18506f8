package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentfleet/agentfleet/store"
)

const scheduleCols = `id, name, cron, spec, tenant, created_by, paused, next_fire_at, last_fire_at, created_at`

func scanSchedule(row pgx.Row) (store.Schedule, error) {
	var (
		s    store.Schedule
		spec []byte
		last pgtype.Timestamptz
	)
	if err := row.Scan(&s.ID, &s.Name, &s.Cron, &spec, &s.Tenant, &s.CreatedBy, &s.Paused, &s.NextFireAt, &last, &s.CreatedAt); err != nil {
		return s, err
	}
	s.Spec = spec
	s.NextFireAt, s.LastFireAt, s.CreatedAt = s.NextFireAt.UTC(), ts(last), s.CreatedAt.UTC()
	return s, nil
}

func oneSchedule(op string, row pgx.Row) (store.Schedule, error) {
	sc, err := scanSchedule(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return sc, store.NotFoundf(op, "no such schedule")
	}
	return sc, translate(op, err)
}

// CreateSchedule implements store.Store.
func (s *Store) CreateSchedule(ctx context.Context, p store.CreateScheduleParams) (store.Schedule, error) {
	p, err := store.PrepareCreateSchedule(p)
	if err != nil {
		return store.Schedule{}, err
	}
	sc, err := scanSchedule(s.pool.QueryRow(ctx, `INSERT INTO schedules (id, name, cron, spec, tenant, created_by, next_fire_at, created_at)
VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8) RETURNING `+scheduleCols, p.ID, p.Name, p.Cron, string(p.Spec), p.Tenant, p.CreatedBy,
		store.Timestamp(p.NextFireAt), s.stamp()))
	return sc, translate("CreateSchedule", err)
}

// GetSchedule implements store.Store.
func (s *Store) GetSchedule(ctx context.Context, id uuid.UUID) (store.Schedule, error) {
	return oneSchedule("GetSchedule", s.pool.QueryRow(ctx, `SELECT `+scheduleCols+` FROM schedules WHERE id = $1`, id))
}

// ListSchedules implements store.Store.
func (s *Store) ListSchedules(ctx context.Context, p store.ListSchedulesParams) ([]store.Schedule, error) {
	if p.Tenants != nil && len(p.Tenants) == 0 {
		return nil, nil
	}
	var due any
	if !p.DueBy.IsZero() {
		due = p.DueBy
	}
	rows, err := s.pool.Query(ctx, `SELECT `+scheduleCols+` FROM schedules
WHERE ($1::text[] IS NULL OR tenant = ANY($1)) AND ($2::timestamptz IS NULL OR (NOT paused AND next_fire_at <= $2))
ORDER BY created_at, id`, p.Tenants, due)
	if err != nil {
		return nil, translate("ListSchedules", err)
	}
	defer rows.Close()
	var out []store.Schedule
	for rows.Next() {
		sc, err := scanSchedule(rows)
		if err != nil {
			return nil, translate("ListSchedules", err)
		}
		out = append(out, sc)
	}
	return out, translate("ListSchedules", rows.Err())
}

// AdvanceSchedule implements store.Store.
func (s *Store) AdvanceSchedule(ctx context.Context, p store.AdvanceScheduleParams) (store.Schedule, error) {
	from := store.Timestamp(p.From)
	sc, err := scanSchedule(s.pool.QueryRow(ctx, `UPDATE schedules SET next_fire_at = $1, last_fire_at = $2
WHERE id = $3 AND next_fire_at = $2 RETURNING `+scheduleCols, store.Timestamp(p.To), from, p.ID))
	if !errors.Is(err, pgx.ErrNoRows) {
		return sc, translate("AdvanceSchedule", err)
	}
	if _, err := s.GetSchedule(ctx, p.ID); err != nil {
		return store.Schedule{}, err
	}
	return store.Schedule{}, store.Conflictf("AdvanceSchedule", "schedule %s is no longer due at %s", p.ID, from.Format(time.RFC3339))
}

// PauseSchedule implements store.Store.
func (s *Store) PauseSchedule(ctx context.Context, id uuid.UUID, paused bool, next time.Time) (store.Schedule, error) {
	return oneSchedule("PauseSchedule", s.pool.QueryRow(ctx, `UPDATE schedules SET paused = $1,
next_fire_at = COALESCE($2, next_fire_at) WHERE id = $3 RETURNING `+scheduleCols, paused, nullTime(store.Timestamp(next)), id))
}

// DeleteSchedule implements store.Store.
func (s *Store) DeleteSchedule(ctx context.Context, id uuid.UUID) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM schedules WHERE id = $1`, id)
	if err != nil {
		return translate("DeleteSchedule", err)
	}
	if tag.RowsAffected() == 0 {
		return store.NotFoundf("DeleteSchedule", "no such schedule")
	}
	return nil
}
