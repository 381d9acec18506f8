package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agentfleet/agentfleet/store"
)

// CreateSession implements store.Store.
func (s *Store) CreateSession(ctx context.Context, p store.CreateSessionParams) (store.Session, error) {
	const op = "CreateSession"
	p, err := s.limits.PrepareCreateSession(p)
	if err != nil {
		return store.Session{}, err
	}
	now := s.stamp()
	sess, err := scanSession(s.w.QueryRowContext(ctx, `
INSERT INTO sessions (id, task_id, profile, provider, model, state, config, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
RETURNING `+sessionCols, p.ID.String(), p.TaskID.String(), p.Profile, p.Provider, p.Model, p.State,
		jsonArg(p.Config), now, now))
	if err = translate(op, err); errors.Is(err, store.ErrNotFound) {
		return sess, store.NotFoundf(op, "TaskID: no task %s", p.TaskID)
	}
	return sess, err
}

// GetSession implements store.Store.
func (s *Store) GetSession(ctx context.Context, p store.GetSessionParams) (store.Session, error) {
	sess, err := scanSession(s.r.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, p.ID.String()))
	if errors.Is(err, sql.ErrNoRows) {
		return sess, store.NotFoundf("GetSession", "no session %s", p.ID)
	}
	return sess, translate("GetSession", err)
}

// ListSessions implements store.Store.
func (s *Store) ListSessions(ctx context.Context, p store.ListSessionsParams) ([]store.Session, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE task_id = ? ORDER BY created_at, id`, p.TaskID.String())
	if err != nil {
		return nil, translate("ListSessions", err)
	}
	defer func() { _ = rows.Close() }()
	var out []store.Session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			return nil, translate("ListSessions", err)
		}
		out = append(out, sess)
	}
	return out, translate("ListSessions", rows.Err())
}

// UpdateSession implements store.Store.
func (s *Store) UpdateSession(ctx context.Context, p store.UpdateSessionParams) (store.Session, error) {
	const op = "UpdateSession"
	p, err := s.limits.PrepareUpdateSession(p)
	if err != nil {
		return store.Session{}, err
	}
	u := p.AddUsage
	sess, err := scanSession(s.w.QueryRowContext(ctx, `
UPDATE sessions SET
	state = coalesce(?, state), provider = coalesce(?, provider), model = coalesce(?, model),
	config = coalesce(?, config),
	input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
	reasoning_tokens = reasoning_tokens + ?, cache_read_tokens = cache_read_tokens + ?,
	cache_write_tokens = cache_write_tokens + ?, cost_usd = cost_usd + ?, updated_at = ?
WHERE id = ?
RETURNING `+sessionCols, p.State, p.Provider, p.Model, jsonArg(p.Config),
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens,
		p.AddCostUSD, s.stamp(), p.ID.String()))
	if errors.Is(err, sql.ErrNoRows) {
		return sess, store.NotFoundf(op, "no session %s", p.ID)
	}
	return sess, translate(op, err)
}
