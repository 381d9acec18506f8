package postgres

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/agentfleet/agentfleet/store"
)

// insertTask inserts a root task, or a child whose root and depth come from
// its parent; it returns no row when the idempotency key exists or the
// parent does not.
const insertTask = `
INSERT INTO tasks (id, parent_id, root_id, depth, state, queue, priority, spec,
	idempotency_key, labels, created_at, updated_at, tenant, submitted_by)
SELECT $1::uuid, p.id, coalesce(p.root_id, $1::uuid), coalesce(p.depth + 1, 0), 'queued',
	$3::text, $4::int, $5::jsonb, $6::text, $7::jsonb, $8::timestamptz, $8::timestamptz,
	coalesce(p.tenant, $9::text), coalesce(p.submitted_by, $10::text)
FROM (SELECT 1) AS one LEFT JOIN tasks p ON p.id = $2::uuid
WHERE $2::uuid IS NULL OR p.id IS NOT NULL
ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
RETURNING ` + taskCols

func insertTaskArgs(p store.CreateTaskParams, now any) []any {
	return []any{p.ID, nullUUID(p.ParentID), p.Queue, p.Priority, jsonArg(p.Spec),
		nullText(p.IdempotencyKey), labelsArg(p.Labels), now, p.Tenant, p.SubmittedBy}
}

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

// CreateTasks implements store.Store: one transaction holding one INSERT of
// the whole batch (insertTasks). A batch in which a task's parent is another
// task of the same batch takes the pipelined path instead, which inserts the
// tasks one statement after the other so that each sees the ones before it.
func (s *Store) CreateTasks(ctx context.Context, p store.CreateTasksParams) ([]store.CreateTaskResult, error) {
	const op = "CreateTasks"
	p, err := s.limits.PrepareCreateTasks(p)
	if err != nil {
		return nil, err
	}
	now := s.stamp()
	out := make([]store.CreateTaskResult, len(p.Tasks))
	insert := s.insertBatch
	if parentInBatch(p.Tasks) {
		insert = s.insertPipelined
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		return insert(ctx, tx, p.Tasks, now, out)
	})
	if err != nil {
		return nil, translateKeep(op, err)
	}
	return out, nil
}

// parentInBatch reports whether a task's parent is a task of the batch.
func parentInBatch(tasks []store.CreateTaskParams) bool {
	ids := make(map[uuid.UUID]struct{}, len(tasks))
	for _, t := range tasks {
		ids[t.ID] = struct{}{}
	}
	for _, t := range tasks {
		if _, ok := ids[t.ParentID]; ok && t.ParentID != uuid.Nil {
			return true
		}
	}
	return false
}

// insertPipelined inserts the tasks with one statement each, pipelined in
// one pgx batch, then explains the tasks that returned no row.
func (s *Store) insertPipelined(ctx context.Context, tx pgx.Tx, tasks []store.CreateTaskParams, now time.Time, out []store.CreateTaskResult) error {
	batch := &pgx.Batch{}
	for _, t := range tasks {
		batch.Queue(insertTask, insertTaskArgs(t, now)...)
	}
	br := tx.SendBatch(ctx, batch)
	var missing []int
	for i := range tasks {
		t, err := scanTask(br.QueryRow())
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			missing = append(missing, i)
		case err != nil:
			_ = br.Close()
			return err
		default:
			out[i] = store.CreateTaskResult{Task: t}
		}
	}
	if err := br.Close(); err != nil {
		return err
	}
	for _, i := range missing {
		var err error
		if out[i], err = s.existingTask(ctx, tx, tasks[i], i); err != nil {
			return err
		}
	}
	return nil
}

// existingTask explains an insert that returned no row: the key exists (the
// first task is the answer) or the parent does not.
func (s *Store) existingTask(ctx context.Context, tx pgx.Tx, p store.CreateTaskParams, i int) (store.CreateTaskResult, error) {
	if p.IdempotencyKey != "" {
		t, err := scanTask(tx.QueryRow(ctx, `SELECT `+taskCols+` FROM tasks WHERE idempotency_key = $1`, p.IdempotencyKey))
		if err == nil {
			return store.CreateTaskResult{Task: t, Existing: true}, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return store.CreateTaskResult{}, err
		}
	}
	return store.CreateTaskResult{}, store.NotFoundf("CreateTasks", "task %d of the batch: ParentID: no task %s", i, p.ParentID)
}

// GetTask implements store.Store.
func (s *Store) GetTask(ctx context.Context, p store.GetTaskParams) (store.Task, error) {
	t, err := scanTask(s.pool.QueryRow(ctx, `SELECT `+taskCols+` FROM tasks WHERE id = $1`, p.ID))
	if errors.Is(err, pgx.ErrNoRows) {
		return t, store.NotFoundf("GetTask", "no task %s", p.ID)
	}
	return t, translate("GetTask", err)
}

// ClaimTask implements store.Store.
func (s *Store) ClaimTask(ctx context.Context, p store.ClaimTaskParams) (store.Task, error) {
	const op = "ClaimTask"
	p, err := store.PrepareClaim(p)
	if err != nil {
		return store.Task{}, err
	}
	t, err := scanTask(s.pool.QueryRow(ctx, claimTask, p.ID, p.WorkerID, s.stamp(),
		statesArg(p.From), nullTime(p.StaleBefore)))
	if errors.Is(err, pgx.ErrNoRows) {
		return t, s.whyNot(ctx, op, p.ID, fmt.Sprintf("in %v", p.From))
	}
	return t, translate(op, err)
}

// claimTask is the claim compare-and-set. The parent CTE locks the direct
// parent's row (FOR SHARE, regardless of its state, so the lock waits for a
// CancelSubtree that holds it) and yields the state it has once locked: the
// committed one, not the statement's snapshot. A task whose parent is
// cancelled is never claimed. Locks are taken parent first, child second,
// the order CancelSubtree uses, so the two cannot deadlock.
const claimTask = `
WITH parent AS MATERIALIZED (
	SELECT p.state FROM tasks p
	WHERE p.id = (SELECT c.parent_id FROM tasks c WHERE c.id = $1)
	FOR SHARE
)
UPDATE tasks SET state = 'running', worker_id = $2, attempts = attempts + 1,
	started_at = coalesce(started_at, $3), heartbeat_at = $3, updated_at = $3, waiting_for = NULL
WHERE id = $1 AND (state = ANY($4::text[])
	OR ($5::timestamptz IS NOT NULL AND state = 'running' AND heartbeat_at < $5::timestamptz)) IS TRUE
	AND NOT EXISTS (SELECT 1 FROM parent WHERE parent.state = 'cancelled')
RETURNING ` + taskCols

// HeartbeatTask implements store.Store.
func (s *Store) HeartbeatTask(ctx context.Context, p store.HeartbeatTaskParams) (time.Time, error) {
	const op = "HeartbeatTask"
	p, err := store.PrepareHeartbeat(p)
	if err != nil {
		return time.Time{}, err
	}
	at := s.stamp() // stored as it is: a stamp is already whole microseconds in UTC
	tag, err := s.pool.Exec(ctx, `
UPDATE tasks SET heartbeat_at = $3, updated_at = $3
WHERE id = $1 AND (state = 'running') IS TRUE AND worker_id = $2`, p.ID, p.WorkerID, at)
	if err != nil {
		return time.Time{}, translate(op, err)
	}
	if tag.RowsAffected() == 0 {
		return time.Time{}, s.whyNot(ctx, op, p.ID, "running on worker "+p.WorkerID)
	}
	return at, nil
}

// transitionUpdate is the transition compare-and-set, without RETURNING.
// Parameters: $1 task, $2 from, $3 to, $4 now, $5 result, $6 error, $7
// waiting for, $8 worker, $9 reopens.
const transitionUpdate = `UPDATE tasks SET state = $3, updated_at = $4,
	result = CASE WHEN $9::boolean THEN $5::jsonb ELSE coalesce($5::jsonb, result) END,
	error = CASE WHEN $9::boolean OR $6::text <> '' THEN $6::text ELSE error END,
	waiting_for = $7::jsonb,
	heartbeat_at = NULL,
	finished_at = CASE WHEN $3 IN ('succeeded', 'failed', 'cancelled') THEN $4
		WHEN $9::boolean THEN NULL ELSE finished_at END
WHERE id = $1 AND (state = $2) IS TRUE AND ($8::text = '' OR state <> 'running' OR worker_id = $8::text)`

// appendThenTransition is a transition with an append (see
// TransitionTaskParams.Append) as one statement: the append's CTEs (its
// parameters after the transition's nine; an advanced session must be the
// task's), then the transition, which matches only if the append's session
// row was written.
func appendThenTransition(create bool) string {
	sess := shiftParams(createSession, 9)
	if !create {
		sess = fmt.Sprintf(shiftParams(advanceSessionFmt, 9), "\n\t\tAND task_id = $1")
	}
	return "WITH " + sess + ",\n" +
		"ins AS (" + shiftParams(insertTurns, 9) + "),\n" +
		"t AS (" + transitionUpdate + "\n\tAND EXISTS (SELECT 1 FROM s)\n\tRETURNING " + taskCols + ")\n" +
		"SELECT " + taskCols + " FROM t"
}

var (
	transitionSQL              = transitionUpdate + "\nRETURNING " + taskCols
	appendAdvanceTransitionSQL = appendThenTransition(false)
	appendCreateTransitionSQL  = appendThenTransition(true)
)

// shiftParams renumbers the $n parameters of a statement fragment by k.
func shiftParams(sql string, k int) string {
	return paramRef.ReplaceAllStringFunc(sql, func(m string) string {
		n, _ := strconv.Atoi(m[1:])
		return "$" + strconv.Itoa(n+k)
	})
}

var paramRef = regexp.MustCompile(`\$[0-9]+`)

// TransitionTask implements store.Store. A reopen (store.Reopens) clears
// the finish time and replaces the result and error with p's (usually
// none).
func (s *Store) TransitionTask(ctx context.Context, p store.TransitionTaskParams) (store.Task, error) {
	const op = "TransitionTask"
	p, err := s.limits.PrepareTransition(p)
	if err != nil {
		return store.Task{}, err
	}
	now := s.stamp()
	args := []any{p.ID, string(p.From), string(p.To), now,
		jsonArg(p.Result), p.Error, jsonArg(p.WaitingFor), p.WorkerID, store.Reopens(p.From, p.To)}
	query := transitionSQL
	if a := p.Append; a != nil {
		query = appendAdvanceTransitionSQL
		if a.CreateSession != nil {
			query = appendCreateTransitionSQL
		}
		args = append(args, appendArgs(*a, now)...)
	}
	t, err := scanTask(s.pool.QueryRow(ctx, query, args...))
	if !errors.Is(err, pgx.ErrNoRows) {
		return t, translate(op, err)
	}
	if a := p.Append; a != nil {
		if err := s.appendWritten(ctx, p.ID, *a, now); err != nil {
			return t, err
		}
	}
	want := string(p.From)
	if p.WorkerID != "" && p.From == store.TaskRunning {
		want += " on worker " + p.WorkerID
	}
	return t, s.whyNot(ctx, op, p.ID, want)
}

// appendWritten reports, after a transition with an append matched no row,
// why the append was not written, or nil when it was (the transition is
// then what did not match): a written append left the session at its last
// seq, stamped with the statement's time.
func (s *Store) appendWritten(ctx context.Context, task uuid.UUID, a store.AppendTurnsParams, now time.Time) error {
	var written bool
	var owner uuid.UUID
	err := s.pool.QueryRow(ctx, `SELECT last_seq = $2 AND updated_at = $3, task_id FROM sessions WHERE id = $1`,
		a.SessionID, a.Turns[len(a.Turns)-1].Seq, now).Scan(&written, &owner)
	switch {
	case err == nil && owner != task:
		return store.ForeignSession(a.SessionID, owner, task)
	case err == nil && written:
		return nil
	}
	return s.whyNoAppend(ctx, a)
}

// whyNot explains a compare-and-set that matched no row.
func (s *Store) whyNot(ctx context.Context, op string, id uuid.UUID, want string) error {
	var state, worker, parent, parentState string
	err := s.pool.QueryRow(ctx, `
SELECT c.state, c.worker_id, coalesce(p.id::text, ''), coalesce(p.state, '')
FROM tasks c LEFT JOIN tasks p ON p.id = c.parent_id WHERE c.id = $1`, id).Scan(&state, &worker, &parent, &parentState)
	if errors.Is(err, pgx.ErrNoRows) {
		return store.NotFoundf(op, "no task %s", id)
	}
	if err != nil {
		return translate(op, err)
	}
	return store.TaskConflict(op, id.String(), state, worker, want, parent, parentState)
}

// CancelSubtree implements store.Store. One statement locks the active
// tasks of the subtree, parents before children, and cancels them; it is
// repeated in the same transaction, each time with a fresh snapshot, until
// it finds nothing: a descendant that a concurrent claim started (the claim
// held its parent's lock first, so the statement waited for it) or that was
// created after the first snapshot is cancelled too. Once the parents are
// cancelled and locked, claims of their children wait for this commit and
// are then refused (see claimTask).
func (s *Store) CancelSubtree(ctx context.Context, p store.CancelSubtreeParams) ([]store.CancelledTask, error) {
	const op = "CancelSubtree"
	p, err := store.PrepareCancel(p)
	if err != nil {
		return nil, err
	}
	var out []store.CancelledTask
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var one int
		if err := tx.QueryRow(ctx, `SELECT 1 FROM tasks WHERE id = $1`, p.ID).Scan(&one); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return store.NotFoundf(op, "no task %s", p.ID)
			}
			return err
		}
		now := s.stamp()
		for {
			got, err := s.cancelActive(ctx, tx, p, now)
			if err != nil || len(got) == 0 {
				return err
			}
			out = append(out, got...)
		}
	})
	return out, translateKeep(op, err)
}

// cancelActive is one pass of CancelSubtree over the tasks it can see.
func (s *Store) cancelActive(ctx context.Context, tx pgx.Tx, p store.CancelSubtreeParams, now time.Time) ([]store.CancelledTask, error) {
	rows, err := tx.Query(ctx, `
WITH RECURSIVE sub(id) AS (
	SELECT $1::uuid
	UNION ALL
	SELECT t.id FROM tasks t JOIN sub ON t.parent_id = sub.id
), old AS (
	SELECT t.id, t.state, t.worker_id FROM tasks t JOIN sub ON t.id = sub.id
	WHERE t.state IN ('queued', 'running', 'waiting')
	ORDER BY t.depth, t.id
	FOR UPDATE OF t
)
UPDATE tasks t SET state = 'cancelled', error = $2, finished_at = $3, updated_at = $3,
	heartbeat_at = NULL, waiting_for = NULL
FROM old WHERE t.id = old.id
RETURNING t.id, old.state, old.worker_id`, p.ID, p.Reason, now)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.CancelledTask, error) {
		var c store.CancelledTask
		err := r.Scan(&c.ID, &c.From, &c.WorkerID)
		return c, err
	})
}
