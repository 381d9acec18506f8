package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentfleet/agentfleet/store"
)

// An append is one statement, hence atomic and one round trip. Its CTE s
// (advanceSessionFmt, whose %s is a further condition on the session row)
// either advances the session's last_seq if the batch continues it (which
// also locks the session row, serializing appenders) or, for a batch that
// creates its session, inserts the session row; the turns are inserted
// from arrays for each row s returns. When the session does not continue
// at $3 (or exists already, for a create), or the append is fenced ($15)
// and the task is not running on that worker, s is empty and nothing is
// written. The fence is a scalar subquery on purpose: written as EXISTS,
// the planner may turn it into a hashed subplan that reads every running
// task of the worker, one index scan per append (O(running tasks) instead
// of one primary-key probe).
//
// Parameters: $1 session, $2 now, $3 first seq, $4 last seq, $5-$9 usage,
// $10 cost, $11-$14 the turns' seqs, kinds, payloads and usages, $15 the
// owner; a create adds $16 task, $17 profile, $18 provider, $19 model, $20
// state, $21 config.
const (
	advanceSessionFmt = `s AS (
	UPDATE sessions SET last_seq = $4,
		input_tokens = input_tokens + $5, output_tokens = output_tokens + $6,
		reasoning_tokens = reasoning_tokens + $7, cache_read_tokens = cache_read_tokens + $8,
		cache_write_tokens = cache_write_tokens + $9, cost_usd = cost_usd + $10, updated_at = $2
	WHERE id = $1 AND last_seq = $3 - 1 AND ` + fenceOnSessionTask + `%s
	RETURNING id
)`
	createSession = `s AS (
	INSERT INTO sessions (id, task_id, profile, provider, model, state, config, last_seq,
		input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
		cost_usd, created_at, updated_at)
	SELECT $1, $16, $17, $18, $19, $20, $21::jsonb, $4, $5, $6, $7, $8, $9, $10, $2, $2
	WHERE $3 = 1 AND ` + fenceOnNewSessionTask + `
	ON CONFLICT (id) DO NOTHING
	RETURNING id
)`
	fenceOnSessionTask = `($15::text = '' OR (SELECT t.state = 'running' AND t.worker_id = $15::text
		FROM tasks t WHERE t.id = sessions.task_id))`
	fenceOnNewSessionTask = `($15::text = '' OR (SELECT t.state = 'running' AND t.worker_id = $15::text
		FROM tasks t WHERE t.id = $16::uuid))`
	insertTurns = `INSERT INTO turns (session_id, seq, kind, payload, usage, created_at)
SELECT s.id, u.seq, u.kind, u.payload::json, u.usage::json, $2
FROM s, unnest($11::bigint[], $12::text[], $13::text[], $14::text[]) AS u(seq, kind, payload, usage)`
)

// appendStatement is the standalone append: advance or create, then insert.
func appendStatement(create bool) string {
	if create {
		return "WITH " + createSession + "\n" + insertTurns
	}
	return "WITH " + fmt.Sprintf(advanceSessionFmt, "") + "\n" + insertTurns
}

var (
	appendAdvanceSQL = appendStatement(false)
	appendCreateSQL  = appendStatement(true)
)

// appendArgs are the parameters of an append statement; now is its stamp.
func appendArgs(p store.AppendTurnsParams, now time.Time) []any {
	n := len(p.Turns)
	seqs, kinds := make([]int64, n), make([]string, n)
	payloads, usages := make([]string, n), make([]*string, n)
	for i, t := range p.Turns {
		seqs[i], kinds[i], payloads[i] = t.Seq, t.Kind, string(t.Payload)
		if t.Usage != nil {
			u := string(t.Usage)
			usages[i] = &u
		}
	}
	u := p.AddUsage
	args := []any{p.SessionID, now, seqs[0], seqs[n-1],
		u.InputTokens, u.OutputTokens, u.ReasoningTokens, u.CacheReadTokens, u.CacheWriteTokens, p.AddCostUSD,
		seqs, kinds, payloads, usages, p.OwnerWorkerID}
	if c := p.CreateSession; c != nil {
		args = append(args, c.TaskID, c.Profile, c.Provider, c.Model, c.State, jsonArg(c.Config))
	}
	return args
}

// appended is what an append wrote, as store.AppendTurns returns it.
func appended(p store.AppendTurnsParams, now time.Time) []store.Turn {
	out := make([]store.Turn, len(p.Turns))
	for i, t := range p.Turns {
		out[i] = store.Turn{SessionID: p.SessionID, Seq: t.Seq, Kind: t.Kind, Payload: t.Payload, Usage: t.Usage, CreatedAt: now}
	}
	return out
}

// AppendTurns implements store.Store.
func (s *Store) AppendTurns(ctx context.Context, p store.AppendTurnsParams) ([]store.Turn, error) {
	const op = "AppendTurns"
	p, err := s.limits.PrepareAppendTurns(p)
	if err != nil {
		return nil, err
	}
	now := s.stamp()
	query := appendAdvanceSQL
	if p.CreateSession != nil {
		query = appendCreateSQL
	}
	tag, err := s.pool.Exec(ctx, query, appendArgs(p, now)...)
	if err != nil {
		return nil, translate(op, err)
	}
	if tag.RowsAffected() != int64(len(p.Turns)) {
		return nil, s.whyNoAppend(ctx, p)
	}
	return appended(p, now), nil
}

// whyNoAppend explains an append that wrote nothing.
func (s *Store) whyNoAppend(ctx context.Context, p store.AppendTurnsParams) error {
	const op = "AppendTurns"
	if c := p.CreateSession; c != nil {
		return s.whyNoCreate(ctx, p.SessionID, c.TaskID, p.OwnerWorkerID)
	}
	var lastSeq int64
	var task, state, worker string
	err := s.pool.QueryRow(ctx, `SELECT s.last_seq, t.id::text, t.state, t.worker_id
FROM sessions s JOIN tasks t ON t.id = s.task_id WHERE s.id = $1`, p.SessionID).Scan(&lastSeq, &task, &state, &worker)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.NotFoundf(op, "SessionID: no session %s", p.SessionID)
	}
	if err != nil {
		return translate(op, err)
	}
	if p.OwnerWorkerID != "" && !store.Owns(store.TaskState(state), worker, p.OwnerWorkerID) {
		return &store.NotOwnerError{Op: op, TaskID: task, State: store.TaskState(state), WorkerID: worker, Want: p.OwnerWorkerID}
	}
	return store.SeqMismatch(op, p.SessionID, p.Turns[0].Seq, lastSeq)
}

// whyNoCreate explains an append that was to create its session and wrote
// nothing: the task does not exist or is not the owner's (checked first, as
// SQLite's driver does), or the session exists.
func (s *Store) whyNoCreate(ctx context.Context, session, taskID uuid.UUID, owner string) error {
	const op = "AppendTurns"
	var state, worker string
	var exists bool
	err := s.pool.QueryRow(ctx, `SELECT t.state, t.worker_id, EXISTS (SELECT 1 FROM sessions WHERE id = $2)
FROM tasks t WHERE t.id = $1`, taskID, session).Scan(&state, &worker, &exists)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return store.NotFoundf(op, "CreateSession.TaskID: no task %s", taskID)
	case err != nil:
		return translate(op, err)
	case owner != "" && !store.Owns(store.TaskState(state), worker, owner):
		return &store.NotOwnerError{Op: op, TaskID: taskID.String(), State: store.TaskState(state), WorkerID: worker, Want: owner}
	case exists:
		return fmt.Errorf("store: %s: %w: session %s exists already", op, store.ErrConflict, session)
	}
	return fmt.Errorf("store: %s: %w: session %s was not created (the task changed meanwhile); retry", op, store.ErrConflict, session)
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
