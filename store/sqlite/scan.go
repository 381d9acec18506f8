package sqlite

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

const taskCols = `id, parent_id, root_id, depth, state, queue, priority, spec, result, error,
	attempts, worker_id, idempotency_key, labels, waiting_for, created_at, updated_at,
	started_at, heartbeat_at, finished_at, tenant, submitted_by`

func scanTask(row scanner) (store.Task, error) {
	var (
		t                               store.Task
		parent, key, result, waitingFor sql.NullString
		spec, labels                    string
		created, updated                int64
		started, heartbeat, finished    sql.NullInt64
	)
	err := row.Scan(&t.ID, &parent, &t.RootID, &t.Depth, &t.State, &t.Queue, &t.Priority,
		&spec, &result, &t.Error, &t.Attempts, &t.WorkerID, &key, &labels, &waitingFor,
		&created, &updated, &started, &heartbeat, &finished, &t.Tenant, &t.SubmittedBy)
	if err != nil {
		return t, err
	}
	if parent.Valid {
		if t.ParentID, err = uuid.Parse(parent.String); err != nil {
			return t, err
		}
	}
	t.IdempotencyKey = key.String
	t.Spec, t.Result, t.WaitingFor = json.RawMessage(spec), rawJSON(result), rawJSON(waitingFor)
	if err := json.Unmarshal([]byte(labels), &t.Labels); err != nil {
		return t, fmt.Errorf("task %s: labels: %w", t.ID, err)
	}
	if len(t.Labels) == 0 {
		t.Labels = nil
	}
	t.CreatedAt, t.UpdatedAt = micros(created), micros(updated)
	t.StartedAt, t.HeartbeatAt, t.FinishedAt = nullMicros(started), nullMicros(heartbeat), nullMicros(finished)
	return t, nil
}

func scanTasks(rows *sql.Rows, err error) ([]store.Task, error) {
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
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

func scanSession(row scanner) (store.Session, error) {
	var s store.Session
	var config sql.NullString
	var created, updated int64
	err := row.Scan(&s.ID, &s.TaskID, &s.Profile, &s.Provider, &s.Model, &s.State, &config, &s.LastSeq,
		&s.Usage.InputTokens, &s.Usage.OutputTokens, &s.Usage.ReasoningTokens,
		&s.Usage.CacheReadTokens, &s.Usage.CacheWriteTokens, &s.CostUSD, &created, &updated)
	s.Config, s.CreatedAt, s.UpdatedAt = rawJSON(config), micros(created), micros(updated)
	return s, err
}

func rawJSON(s sql.NullString) json.RawMessage {
	if !s.Valid {
		return nil
	}
	return json.RawMessage(s.String)
}

func micros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func nullMicros(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return micros(v.Int64)
}

// Arguments: SQLite stores uuids and JSON as text, times as microseconds.

func idArg(id uuid.UUID) any {
	if id == uuid.Nil {
		return nil
	}
	return id.String()
}

func textArg(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func jsonArg(b json.RawMessage) any {
	if b == nil {
		return nil
	}
	return string(b)
}

func timeArg(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func labelsArg(l map[string]string) string {
	if len(l) == 0 {
		return "{}"
	}
	b, _ := json.Marshal(l) // a map of strings always marshals
	return string(b)
}
