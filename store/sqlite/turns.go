package sqlite

import (
	"context"
	"database/sql"
	"errors"

	"github.com/agentfleet/agentfleet/store"
	"github.com/google/uuid"
)

// AppendTurns implements store.Store: one write transaction advances the
// session's last_seq only if the batch continues it (or creates the
// session), then inserts the batch.
func (s *Store) AppendTurns(ctx context.Context, p store.AppendTurnsParams) ([]store.Turn, error) {
	const op = "AppendTurns"
	p, err := s.limits.PrepareAppendTurns(p)
	if err != nil {
		return nil, err
	}
	now := s.stamp()
	if err := s.tx(ctx, op, func(tx *sql.Tx) error { return appendTx(ctx, tx, p, now) }); err != nil {
		return nil, err
	}
	out := make([]store.Turn, len(p.Turns))
	for i, t := range p.Turns {
		out[i] = store.Turn{SessionID: p.SessionID, Seq: t.Seq, Kind: t.Kind, Payload: t.Payload, Usage: t.Usage, CreatedAt: micros(now)}
	}
	return out, nil
}

// appendTx writes a prepared append in tx: the session row (advanced, or
// created), then the turns. It writes nothing and explains why when the
// session does not continue at the batch's first seq or the fence fails.
func appendTx(ctx context.Context, tx *sql.Tx, p store.AppendTurnsParams, now int64) error {
	if err := advanceOrCreate(ctx, tx, p, now); err != nil {
		return err
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO turns (session_id, seq, kind, payload, usage, created_at)
VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer func() { _ = stmt.Close() }()
	id := p.SessionID.String()
	for _, t := range p.Turns {
		if _, err := stmt.ExecContext(ctx, id, t.Seq, t.Kind, string(t.Payload), jsonArg(t.Usage), now); err != nil {
			return err
		}
	}
	return nil
}

// advanceOrCreate writes the session row of an append.
func advanceOrCreate(ctx context.Context, tx *sql.Tx, p store.AppendTurnsParams, now int64) error {
	first, last := p.Turns[0].Seq, p.Turns[len(p.Turns)-1].Seq
	u := p.AddUsage
	if c := p.CreateSession; c != nil {
		if err := fenceNewSession(ctx, tx, c.TaskID, p.OwnerWorkerID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
INSERT INTO sessions (id, task_id, profile, provider, model, state, config, last_seq,
	input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
	cost_usd, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			p.SessionID.String(), c.TaskID.String(), c.Profile, c.Provider, c.Model, c.State, jsonArg(c.Config), last,
			u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens,
			p.AddCostUSD, now, now)
		return err
	}
	res, err := tx.ExecContext(ctx, `
UPDATE sessions SET last_seq = ?,
	input_tokens = input_tokens + ?, output_tokens = output_tokens + ?,
	reasoning_tokens = reasoning_tokens + ?, cache_read_tokens = cache_read_tokens + ?,
	cache_write_tokens = cache_write_tokens + ?, cost_usd = cost_usd + ?, updated_at = ?
WHERE id = ? AND last_seq = ?
	AND (? = '' OR EXISTS (SELECT 1 FROM tasks t
		WHERE t.id = sessions.task_id AND t.state = 'running' AND t.worker_id = ?))`,
		last, u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens,
		u.CacheWriteTokens, p.AddCostUSD, now, p.SessionID.String(), first-1, p.OwnerWorkerID, p.OwnerWorkerID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return whyNoAppend(ctx, tx, p, first)
	}
	return nil
}

// fenceNewSession checks, for an append that creates its session, that the
// task exists and, when owner is set, runs on that worker.
func fenceNewSession(ctx context.Context, tx *sql.Tx, task uuid.UUID, owner string) error {
	const op = "AppendTurns"
	var state, worker string
	err := tx.QueryRowContext(ctx, `SELECT state, worker_id FROM tasks WHERE id = ?`, task.String()).Scan(&state, &worker)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return store.NotFoundf(op, "CreateSession.TaskID: no task %s", task)
	case err != nil:
		return err
	case owner != "" && !store.Owns(store.TaskState(state), worker, owner):
		return &store.NotOwnerError{Op: op, TaskID: task.String(), State: store.TaskState(state), WorkerID: worker, Want: owner}
	}
	return nil
}

func whyNoAppend(ctx context.Context, tx *sql.Tx, p store.AppendTurnsParams, first int64) error {
	const op = "AppendTurns"
	var lastSeq int64
	var task, state, worker string
	err := tx.QueryRowContext(ctx, `SELECT s.last_seq, t.id, t.state, t.worker_id
FROM sessions s JOIN tasks t ON t.id = s.task_id WHERE s.id = ?`, p.SessionID.String()).Scan(&lastSeq, &task, &state, &worker)
	if errors.Is(err, sql.ErrNoRows) {
		return store.NotFoundf(op, "SessionID: no session %s", p.SessionID)
	}
	if err != nil {
		return err
	}
	if p.OwnerWorkerID != "" && !store.Owns(store.TaskState(state), worker, p.OwnerWorkerID) {
		return &store.NotOwnerError{Op: op, TaskID: task, State: store.TaskState(state), WorkerID: worker, Want: p.OwnerWorkerID}
	}
	return store.SeqMismatch(op, p.SessionID, first, lastSeq)
}

// LoadTurns implements store.Store.
func (s *Store) LoadTurns(ctx context.Context, p store.LoadTurnsParams) ([]store.Turn, error) {
	const op = "LoadTurns"
	p, err := store.PrepareLoadTurns(p)
	if err != nil {
		return nil, err
	}
	limit := int64(-1) // SQLite: no limit
	if p.Limit > 0 {
		limit = int64(p.Limit)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT seq, kind, payload, usage, created_at FROM turns
WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?`, p.SessionID.String(), p.AfterSeq, limit)
	if err != nil {
		return nil, translate(op, err)
	}
	defer func() { _ = rows.Close() }()
	var turns []store.Turn
	for rows.Next() {
		t := store.Turn{SessionID: p.SessionID}
		var payload string
		var usage sql.NullString
		var created int64
		if err := rows.Scan(&t.Seq, &t.Kind, &payload, &usage, &created); err != nil {
			return nil, translate(op, err)
		}
		t.Payload, t.Usage, t.CreatedAt = []byte(payload), rawJSON(usage), micros(created)
		turns = append(turns, t)
	}
	if err := rows.Err(); err != nil {
		return nil, translate(op, err)
	}
	if len(turns) == 0 {
		if _, err := s.GetSession(ctx, store.GetSessionParams{ID: p.SessionID}); err != nil {
			return nil, err
		}
	}
	return turns, nil
}
