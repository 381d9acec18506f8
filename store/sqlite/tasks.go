package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// CreateTask implements store.Store.
func (s *Store) CreateTask(ctx context.Context, p store.CreateTaskParams) (store.CreateTaskResult, error) {
	p, err := s.limits.PrepareCreateTask(p, "")
	if err != nil {
		return store.CreateTaskResult{}, err
	}
	res, err := s.CreateTasks(ctx, store.CreateTasksParams{Tasks: []store.CreateTaskParams{p}})
	if err != nil {
		return store.CreateTaskResult{}, err
	}
	return res[0], nil
}

// CreateTasks implements store.Store in one write transaction: prepared
// multi-row inserts of up to insertChunk tasks each (insertBatch), or, when
// a task's parent is another task of the batch, one task after the other.
func (s *Store) CreateTasks(ctx context.Context, p store.CreateTasksParams) ([]store.CreateTaskResult, error) {
	p, err := s.limits.PrepareCreateTasks(p)
	if err != nil {
		return nil, err
	}
	out := make([]store.CreateTaskResult, len(p.Tasks))
	now := s.stamp()
	err = s.tx(ctx, "CreateTasks", func(tx *sql.Tx) error {
		if !parentInBatch(p.Tasks) {
			return insertBatch(ctx, tx, p.Tasks, now, out)
		}
		for i, t := range p.Tasks {
			if out[i], err = createTask(ctx, tx, t, i, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func createTask(ctx context.Context, tx *sql.Tx, p store.CreateTaskParams, i int, now int64) (store.CreateTaskResult, error) {
	if p.IdempotencyKey != "" {
		t, err := scanTask(tx.QueryRowContext(ctx, `SELECT `+taskCols+` FROM tasks WHERE idempotency_key = ?`, p.IdempotencyKey))
		if err == nil {
			return store.CreateTaskResult{Task: t, Existing: true}, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return store.CreateTaskResult{}, err
		}
	}
	root, depth := p.ID, 0
	if p.ParentID != uuid.Nil {
		err := tx.QueryRowContext(ctx, `SELECT root_id, depth + 1, tenant, submitted_by FROM tasks WHERE id = ?`,
			p.ParentID.String()).Scan(&root, &depth, &p.Tenant, &p.SubmittedBy)
		if errors.Is(err, sql.ErrNoRows) {
			return store.CreateTaskResult{}, store.NotFoundf("CreateTasks", "task %d of the batch: ParentID: no task %s", i, p.ParentID)
		}
		if err != nil {
			return store.CreateTaskResult{}, err
		}
	}
	t, err := scanTask(tx.QueryRowContext(ctx, `
INSERT INTO tasks (id, parent_id, root_id, depth, state, queue, priority, spec, idempotency_key, labels, created_at, updated_at,
	tenant, submitted_by)
VALUES (?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?)
RETURNING `+taskCols, p.ID.String(), idArg(p.ParentID), root.String(), depth, p.Queue, p.Priority,
		string(p.Spec), textArg(p.IdempotencyKey), labelsArg(p.Labels), now, now, p.Tenant, p.SubmittedBy))
	return store.CreateTaskResult{Task: t}, err
}

// GetTask implements store.Store.
func (s *Store) GetTask(ctx context.Context, p store.GetTaskParams) (store.Task, error) {
	t, err := scanTask(s.r.QueryRowContext(ctx, `SELECT `+taskCols+` FROM tasks WHERE id = ?`, p.ID.String()))
	if errors.Is(err, sql.ErrNoRows) {
		return t, store.NotFoundf("GetTask", "no task %s", p.ID)
	}
	return t, translate("GetTask", err)
}

// casTask runs an UPDATE ... RETURNING on one task and explains a miss.
func (s *Store) casTask(ctx context.Context, op string, id uuid.UUID, want, query string, args ...any) (store.Task, error) {
	var t store.Task
	err := s.tx(ctx, op, func(tx *sql.Tx) error {
		var err error
		t, err = scanTask(tx.QueryRowContext(ctx, query, args...))
		if errors.Is(err, sql.ErrNoRows) {
			return whyNot(ctx, tx, op, id, want)
		}
		return err
	})
	return t, err
}

func whyNot(ctx context.Context, tx *sql.Tx, op string, id uuid.UUID, want string) error {
	var state, worker, parent, parentState string
	err := tx.QueryRowContext(ctx, `
SELECT c.state, c.worker_id, coalesce(p.id, ''), coalesce(p.state, '')
FROM tasks c LEFT JOIN tasks p ON p.id = c.parent_id WHERE c.id = ?`, id.String()).Scan(&state, &worker, &parent, &parentState)
	if errors.Is(err, sql.ErrNoRows) {
		return store.NotFoundf(op, "no task %s", id)
	}
	if err != nil {
		return err
	}
	return store.TaskConflict(op, id.String(), state, worker, want, parent, parentState)
}

// ClaimTask implements store.Store.
func (s *Store) ClaimTask(ctx context.Context, p store.ClaimTaskParams) (store.Task, error) {
	p, err := store.PrepareClaim(p)
	if err != nil {
		return store.Task{}, err
	}
	from := make([]string, len(p.From))
	args := []any{p.WorkerID, s.stamp(), p.ID.String()}
	for i, st := range p.From {
		from[i] = "?"
		args = append(args, string(st))
	}
	args = append(args, timeArg(p.StaleBefore), timeArg(p.StaleBefore))
	return s.casTask(ctx, "ClaimTask", p.ID, fmt.Sprintf("in %v", p.From), `
UPDATE tasks SET state = 'running', worker_id = ?1, attempts = attempts + 1,
	started_at = coalesce(started_at, ?2), heartbeat_at = ?2, updated_at = ?2, waiting_for = NULL
WHERE id = ?3 AND (state IN (`+strings.Join(from, ", ")+`)
	OR (? IS NOT NULL AND state = 'running' AND heartbeat_at < ?))
	AND NOT EXISTS (SELECT 1 FROM tasks p WHERE p.id = tasks.parent_id AND p.state = 'cancelled')
RETURNING `+taskCols, args...)
}

// HeartbeatTask implements store.Store.
func (s *Store) HeartbeatTask(ctx context.Context, p store.HeartbeatTaskParams) (time.Time, error) {
	p, err := store.PrepareHeartbeat(p)
	if err != nil {
		return time.Time{}, err
	}
	t, err := s.casTask(ctx, "HeartbeatTask", p.ID, "running on worker "+p.WorkerID, `
UPDATE tasks SET heartbeat_at = ?1, updated_at = ?1
WHERE id = ?2 AND state = 'running' AND worker_id = ?3
RETURNING `+taskCols, s.stamp(), p.ID.String(), p.WorkerID)
	return t.HeartbeatAt, err
}

// TransitionTask implements store.Store. A reopen (store.Reopens) clears
// the finish time and replaces the result and error with p's (usually
// none).
func (s *Store) TransitionTask(ctx context.Context, p store.TransitionTaskParams) (store.Task, error) {
	const op = "TransitionTask"
	p, err := s.limits.PrepareTransition(p)
	if err != nil {
		return store.Task{}, err
	}
	want := string(p.From)
	if p.WorkerID != "" && p.From == store.TaskRunning {
		want += " on worker " + p.WorkerID
	}
	now := s.stamp()
	var t store.Task
	var conflict error // the transition's; the append it follows stays written
	err = s.tx(ctx, op, func(tx *sql.Tx) error {
		if p.Append != nil {
			if err := appendOfTaskTx(ctx, tx, p.ID, *p.Append, now); err != nil {
				return err
			}
		}
		var err error
		t, err = scanTask(tx.QueryRowContext(ctx, transitionSQL, p.ID.String(), string(p.From), string(p.To), now,
			jsonArg(p.Result), p.Error, jsonArg(p.WaitingFor), p.WorkerID, store.Reopens(p.From, p.To)))
		if errors.Is(err, sql.ErrNoRows) {
			conflict = whyNot(ctx, tx, op, p.ID, want)
			if p.Append == nil || !store.KnownError(conflict) {
				return conflict
			}
			return nil
		}
		return err
	})
	if err == nil {
		err = conflict
	}
	return t, err
}

// transitionSQL is the transition compare-and-set: ?1 task, ?2 from, ?3 to,
// ?4 now, ?5 result, ?6 error, ?7 waiting for, ?8 worker, ?9 reopens.
const transitionSQL = `
UPDATE tasks SET state = ?3, updated_at = ?4,
	result = CASE WHEN ?9 THEN ?5 ELSE coalesce(?5, result) END,
	error = CASE WHEN ?9 OR ?6 <> '' THEN ?6 ELSE error END,
	waiting_for = ?7,
	heartbeat_at = NULL,
	finished_at = CASE WHEN ?3 IN ('succeeded', 'failed', 'cancelled') THEN ?4
		WHEN ?9 THEN NULL ELSE finished_at END
WHERE id = ?1 AND state = ?2 AND (?8 = '' OR state <> 'running' OR worker_id = ?8)
RETURNING ` + taskCols

// CancelSubtree implements store.Store.
func (s *Store) CancelSubtree(ctx context.Context, p store.CancelSubtreeParams) ([]store.CancelledTask, error) {
	const op = "CancelSubtree"
	p, err := store.PrepareCancel(p)
	if err != nil {
		return nil, err
	}
	var out []store.CancelledTask
	err = s.tx(ctx, op, func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM tasks WHERE id = ?`, p.ID.String()).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return store.NotFoundf(op, "no task %s", p.ID)
		}
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `
WITH RECURSIVE sub(id) AS (
	SELECT ?1
	UNION ALL
	SELECT t.id FROM tasks t JOIN sub ON t.parent_id = sub.id
)
SELECT t.id, t.state, t.worker_id FROM tasks t JOIN sub ON t.id = sub.id
WHERE t.state IN ('queued', 'running', 'waiting')`, p.ID.String())
		if err != nil {
			return err
		}
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			var c store.CancelledTask
			if err := rows.Scan(&c.ID, &c.From, &c.WorkerID); err != nil {
				return err
			}
			out = append(out, c)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		now := s.stamp()
		for _, c := range out {
			if _, err := tx.ExecContext(ctx, `UPDATE tasks SET state = 'cancelled', error = ?, finished_at = ?,
	updated_at = ?, heartbeat_at = NULL, waiting_for = NULL WHERE id = ?`, p.Reason, now, now, c.ID.String()); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// appendOfTaskTx is appendTx for a transition's Append: the session must be
// the task's.
func appendOfTaskTx(ctx context.Context, tx *sql.Tx, task uuid.UUID, a store.AppendTurnsParams, now int64) error {
	if a.CreateSession == nil {
		var owner string
		err := tx.QueryRowContext(ctx, `SELECT task_id FROM sessions WHERE id = ?`, a.SessionID.String()).Scan(&owner)
		if err == nil && owner != task.String() {
			return store.ForeignSession(a.SessionID, uuid.MustParse(owner), task)
		}
	}
	return appendTx(ctx, tx, a, now)
}
