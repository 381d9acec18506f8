package postgres

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentfleet/agentfleet/store"
)

func pgxConnConfig(dsn string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: bad DSN: %w", err)
	}
	return cfg, nil
}

const taskCols = `id, parent_id, root_id, depth, state, queue, priority, spec, result, error,
	attempts, worker_id, idempotency_key, labels, waiting_for, created_at, updated_at,
	started_at, heartbeat_at, finished_at, tenant, submitted_by`

func scanTask(row pgx.Row) (store.Task, error) {
	var (
		t                                 store.Task
		parent                            pgtype.UUID
		key                               pgtype.Text
		labels, spec, result, waitingFor  []byte
		started, heartbeat, finished, cat pgtype.Timestamptz
		upd                               time.Time
	)
	err := row.Scan(&t.ID, &parent, &t.RootID, &t.Depth, &t.State, &t.Queue, &t.Priority,
		&spec, &result, &t.Error, &t.Attempts, &t.WorkerID, &key, &labels, &waitingFor,
		&cat, &upd, &started, &heartbeat, &finished, &t.Tenant, &t.SubmittedBy)
	if err != nil {
		return t, err
	}
	if parent.Valid {
		t.ParentID = parent.Bytes
	}
	t.IdempotencyKey = key.String
	t.Spec, t.Result, t.WaitingFor = spec, result, waitingFor
	if len(labels) > 0 {
		if err := json.Unmarshal(labels, &t.Labels); err != nil {
			return t, fmt.Errorf("task %s: labels: %w", t.ID, err)
		}
	}
	t.CreatedAt, t.UpdatedAt = cat.Time.UTC(), upd.UTC()
	t.StartedAt, t.HeartbeatAt, t.FinishedAt = ts(started), ts(heartbeat), ts(finished)
	return t, nil
}

func scanTasks(rows pgx.Rows) ([]store.Task, error) {
	defer rows.Close()
	var out []store.Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

const sessionCols = `id, task_id, profile, provider, model, state, config, last_seq,
	input_tokens, output_tokens, reasoning_tokens, cache_read_tokens, cache_write_tokens,
	cost_usd, created_at, updated_at`

func scanSession(row pgx.Row) (store.Session, error) {
	var s store.Session
	var config []byte
	err := row.Scan(&s.ID, &s.TaskID, &s.Profile, &s.Provider, &s.Model, &s.State, &config, &s.LastSeq,
		&s.Usage.InputTokens, &s.Usage.OutputTokens, &s.Usage.ReasoningTokens,
		&s.Usage.CacheReadTokens, &s.Usage.CacheWriteTokens, &s.CostUSD, &s.CreatedAt, &s.UpdatedAt)
	s.Config = config
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	return s, err
}

func ts(t pgtype.Timestamptz) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

// nullTime is NULL for the zero time.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

// nullUUID is NULL for uuid.Nil.
func nullUUID(id uuid.UUID) any {
	if id == uuid.Nil {
		return nil
	}
	return id
}

// nullText is NULL for "".
func nullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// jsonArg sends JSON as text (NULL for nil), which Postgres casts to json or jsonb.
func jsonArg(b json.RawMessage) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func labelsArg(l map[string]string) string {
	if len(l) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(l) // a map of strings always marshals
	return string(b)
}

func statesArg(states []store.TaskState) []string {
	out := make([]string, len(states))
	for i, s := range states {
		out[i] = string(s)
	}
	return out
}
