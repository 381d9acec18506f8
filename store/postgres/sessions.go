package postgres

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"

	"github.com/agentfleet/agentfleet/store"
)

// CreateSession implements store.Store.
func (s *Store) CreateSession(ctx context.Context, p store.CreateSessionParams) (store.Session, error) {
	const op = "CreateSession"
	p, err := s.limits.PrepareCreateSession(p)
	if err != nil {
		return store.Session{}, err
	}
	sess, err := scanSession(s.pool.QueryRow(ctx, `
INSERT INTO sessions (id, task_id, profile, provider, model, state, config, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $8)
RETURNING `+sessionCols, p.ID, p.TaskID, p.Profile, p.Provider, p.Model, p.State, jsonArg(p.Config), s.stamp()))
	if errors.Is(translate(op, err), store.ErrNotFound) {
		return sess, store.NotFoundf(op, "TaskID: no task %s", p.TaskID)
	}
	return sess, translate(op, err)
}

// GetSession implements store.Store.
func (s *Store) GetSession(ctx context.Context, p store.GetSessionParams) (store.Session, error) {
	sess, err := scanSession(s.pool.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = $1`, p.ID))
	if errors.Is(err, pgx.ErrNoRows) {
		return sess, store.NotFoundf("GetSession", "no session %s", p.ID)
	}
	return sess, translate("GetSession", err)
}

// ListSessions implements store.Store.
func (s *Store) ListSessions(ctx context.Context, p store.ListSessionsParams) ([]store.Session, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+sessionCols+` FROM sessions WHERE task_id = $1 ORDER BY created_at, id`, p.TaskID)
	if err != nil {
		return nil, translate("ListSessions", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Session, error) { return scanSession(r) })
	return out, translate("ListSessions", err)
}

// UpdateSession implements store.Store.
func (s *Store) UpdateSession(ctx context.Context, p store.UpdateSessionParams) (store.Session, error) {
	const op = "UpdateSession"
	p, err := s.limits.PrepareUpdateSession(p)
	if err != nil {
		return store.Session{}, err
	}
	u := p.AddUsage
	sess, err := scanSession(s.pool.QueryRow(ctx, `
UPDATE sessions SET
	state = coalesce($2, state), provider = coalesce($3, provider), model = coalesce($4, model),
	config = coalesce($5::jsonb, config),
	input_tokens = input_tokens + $6, output_tokens = output_tokens + $7,
	reasoning_tokens = reasoning_tokens + $8, cache_read_tokens = cache_read_tokens + $9,
	cache_write_tokens = cache_write_tokens + $10, cost_usd = cost_usd + $11, updated_at = $12
WHERE id = $1
RETURNING `+sessionCols, p.ID, p.State, p.Provider, p.Model, jsonArg(p.Config),
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens,
		p.AddCostUSD, s.stamp()))
	if errors.Is(err, pgx.ErrNoRows) {
		return sess, store.NotFoundf(op, "no session %s", p.ID)
	}
	return sess, translate(op, err)
}
