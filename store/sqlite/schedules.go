package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

const scheduleCols = `id, name, cron, spec, tenant, created_by, paused, next_fire_at, last_fire_at, created_at`

func scanSchedule(row scanner) (store.Schedule, error) {
	var (
		s             store.Schedule
		spec          string
		paused        int64
		next, created int64
		last          sql.NullInt64
	)
	if err := row.Scan(&s.ID, &s.Name, &s.Cron, &spec, &s.Tenant, &s.CreatedBy, &paused, &next, &last, &created); err != nil {
		return s, err
	}
	s.Spec, s.Paused = []byte(spec), paused != 0
	s.NextFireAt, s.LastFireAt, s.CreatedAt = micros(next), nullMicros(last), micros(created)
	return s, nil
}

func (s *Store) oneSchedule(op string, row *sql.Row) (store.Schedule, error) {
	sc, err := scanSchedule(row)
	if errors.Is(err, sql.ErrNoRows) {
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
	var sc store.Schedule
	err = s.tx(ctx, "CreateSchedule", func(tx *sql.Tx) error {
		var err error
		sc, err = scanSchedule(tx.QueryRowContext(ctx, `INSERT INTO schedules (id, name, cron, spec, tenant, created_by, next_fire_at, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING `+scheduleCols, p.ID.String(), p.Name, p.Cron, string(p.Spec), p.Tenant, p.CreatedBy,
			p.NextFireAt.UnixMicro(), s.stamp()))
		return err
	})
	return sc, err
}

// GetSchedule implements store.Store.
func (s *Store) GetSchedule(ctx context.Context, id uuid.UUID) (store.Schedule, error) {
	return s.oneSchedule("GetSchedule", s.r.QueryRowContext(ctx, `SELECT `+scheduleCols+` FROM schedules WHERE id = ?`, id.String()))
}

// ListSchedules implements store.Store.
func (s *Store) ListSchedules(ctx context.Context, p store.ListSchedulesParams) ([]store.Schedule, error) {
	var where []string
	var args []any
	if p.Tenants != nil {
		if len(p.Tenants) == 0 {
			return nil, nil
		}
		where = append(where, `tenant IN (`+strings.Repeat("?, ", len(p.Tenants)-1)+`?)`)
		for _, t := range p.Tenants {
			args = append(args, t)
		}
	}
	if !p.DueBy.IsZero() {
		where = append(where, `paused = 0 AND next_fire_at <= ?`)
		args = append(args, p.DueBy.UnixMicro())
	}
	q := `SELECT ` + scheduleCols + ` FROM schedules`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, ` AND `)
	}
	rows, err := s.r.QueryContext(ctx, q+` ORDER BY created_at, id`, args...)
	if err != nil {
		return nil, translate("ListSchedules", err)
	}
	defer func() { _ = rows.Close() }()
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
	var sc store.Schedule
	err := s.tx(ctx, "AdvanceSchedule", func(tx *sql.Tx) error {
		var err error
		sc, err = scanSchedule(tx.QueryRowContext(ctx, `UPDATE schedules SET next_fire_at = ?, last_fire_at = ?
WHERE id = ? AND next_fire_at = ? RETURNING `+scheduleCols, p.To.UnixMicro(), p.From.UnixMicro(), p.ID.String(), p.From.UnixMicro()))
		if errors.Is(err, sql.ErrNoRows) {
			if _, gerr := scanSchedule(tx.QueryRowContext(ctx, `SELECT `+scheduleCols+` FROM schedules WHERE id = ?`, p.ID.String())); errors.Is(gerr, sql.ErrNoRows) {
				return store.NotFoundf("AdvanceSchedule", "no such schedule")
			}
			return store.Conflictf("AdvanceSchedule", "schedule %s is no longer due at %s", p.ID, p.From.UTC().Format(time.RFC3339))
		}
		return err
	})
	return sc, err
}

// PauseSchedule implements store.Store.
func (s *Store) PauseSchedule(ctx context.Context, id uuid.UUID, paused bool, next time.Time) (store.Schedule, error) {
	var sc store.Schedule
	err := s.tx(ctx, "PauseSchedule", func(tx *sql.Tx) error {
		var err error
		sc, err = s.oneSchedule("PauseSchedule", tx.QueryRowContext(ctx, `UPDATE schedules SET paused = ?,
next_fire_at = CASE WHEN ? = 0 THEN next_fire_at ELSE ? END WHERE id = ? RETURNING `+scheduleCols,
			boolInt(paused), boolInt(!next.IsZero()), next.UnixMicro(), id.String()))
		return err
	})
	return sc, err
}

// DeleteSchedule implements store.Store.
func (s *Store) DeleteSchedule(ctx context.Context, id uuid.UUID) error {
	return s.tx(ctx, "DeleteSchedule", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM schedules WHERE id = ?`, id.String())
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.NotFoundf("DeleteSchedule", "no such schedule")
		}
		return nil
	})
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
