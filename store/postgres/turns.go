package postgres

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentfleet/agentfleet/store"
)

// appendTurns is one statement, hence atomic and one round trip: it advances
// the session's last_seq only if the batch continues it (which also locks the
// session row, serializing appenders) and inserts the batch from arrays.
// When the session does not continue at $3, or the append is fenced ($15)
// and the task is not running on that worker, nothing is written. The fence
// is a scalar subquery on purpose: written as EXISTS, the planner may turn it
// into a hashed subplan that reads every running task of the worker, one
// index scan per append (O(running tasks) instead of one primary-key probe).
const appendTurns = `
WITH s AS (
	UPDATE sessions SET last_seq = $4,
		input_tokens = input_tokens + $5, output_tokens = output_tokens + $6,
		reasoning_tokens = reasoning_tokens + $7, cache_read_tokens = cache_read_tokens + $8,
		cache_write_tokens = cache_write_tokens + $9, cost_usd = cost_usd + $10, updated_at = $2
	WHERE id = $1 AND last_seq = $3 - 1
		AND ($15::text = '' OR (SELECT t.state = 'running' AND t.worker_id = $15::text
			FROM tasks t WHERE t.id = sessions.task_id))
	RETURNING id
)
INSERT INTO turns (session_id, seq, kind, payload, usage, created_at)
SELECT s.id, u.seq, u.kind, u.payload::json, u.usage::json, $2
FROM s, unnest($11::bigint[], $12::text[], $13::text[], $14::text[]) AS u(seq, kind, payload, usage)`

// AppendTurns implements store.Store.
func (s *Store) AppendTurns(ctx context.Context, p store.AppendTurnsParams) ([]store.Turn, error) {
	const op = "AppendTurns"
	p, err := s.limits.PrepareAppendTurns(p)
	if err != nil {
		return nil, err
	}
	n := len(p.Turns)
	seqs, kinds := make([]int64, n), make([]string, n)
	payloads, usages := make([]string, n), make([]*string, n)
	now := s.stamp()
	out := make([]store.Turn, n)
	for i, t := range p.Turns {
		seqs[i], kinds[i], payloads[i] = t.Seq, t.Kind, string(t.Payload)
		if t.Usage != nil {
			u := string(t.Usage)
			usages[i] = &u
		}
		out[i] = store.Turn{SessionID: p.SessionID, Seq: t.Seq, Kind: t.Kind, Payload: t.Payload, Usage: t.Usage, CreatedAt: now}
	}
	first, last := seqs[0], seqs[n-1]
	u := p.AddUsage
	tag, err := s.pool.Exec(ctx, appendTurns, p.SessionID, now, first, last,
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens, p.AddCostUSD,
		seqs, kinds, payloads, usages, p.OwnerWorkerID)
	if err != nil {
		return nil, translate(op, err)
	}
	if tag.RowsAffected() != int64(n) {
		return nil, s.whyNoAppend(ctx, p.SessionID, first, p.OwnerWorkerID)
	}
	return out, nil
}

// whyNoAppend explains an append that wrote nothing.
func (s *Store) whyNoAppend(ctx context.Context, session uuid.UUID, first int64, owner string) error {
	const op = "AppendTurns"
	var lastSeq int64
	var task, state, worker string
	err := s.pool.QueryRow(ctx, `SELECT s.last_seq, t.id::text, t.state, t.worker_id
FROM sessions s JOIN tasks t ON t.id = s.task_id WHERE s.id = $1`, session).Scan(&lastSeq, &task, &state, &worker)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.NotFoundf(op, "SessionID: no session %s", session)
	}
	if err != nil {
		return translate(op, err)
	}
	if owner != "" && !store.Owns(store.TaskState(state), worker, owner) {
		return &store.NotOwnerError{Op: op, TaskID: task, State: store.TaskState(state), WorkerID: worker, Want: owner}
	}
	return store.SeqMismatch(op, session, first, lastSeq)
}

// LoadTurns implements store.Store.
func (s *Store) LoadTurns(ctx context.Context, p store.LoadTurnsParams) ([]store.Turn, error) {
	const op = "LoadTurns"
	p, err := store.PrepareLoadTurns(p)
	if err != nil {
		return nil, err
	}
	limit := any(nil)
	if p.Limit > 0 {
		limit = p.Limit
	}
	rows, err := s.pool.Query(ctx, `SELECT seq, kind, payload, usage, created_at FROM turns
WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, p.SessionID, p.AfterSeq, limit)
	if err != nil {
		return nil, translate(op, err)
	}
	turns, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Turn, error) {
		t := store.Turn{SessionID: p.SessionID}
		var payload, usage []byte
		err := r.Scan(&t.Seq, &t.Kind, &payload, &usage, &t.CreatedAt)
		t.Payload, t.Usage, t.CreatedAt = payload, usage, t.CreatedAt.UTC()
		return t, err
	})
	if err != nil {
		return nil, translate(op, err)
	}
	if len(turns) == 0 {
		if _, err := s.GetSession(ctx, store.GetSessionParams{ID: p.SessionID}); err != nil {
			return nil, err
		}
	}
	return turns, nil
}
