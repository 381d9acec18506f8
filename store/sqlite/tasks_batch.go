package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// insertChunk is the most tasks one INSERT carries: 10 parameters a task
// stay well below SQLite's limit of 32766 parameters a statement.
const insertChunk = 500

// insertTasksSQL is the INSERT of n tasks: their columns arrive as rows of
// a VALUES list, are joined to their parents and inserted in the batch's
// order, so that of two tasks with one idempotency key the first is
// inserted. A task whose key exists, or whose parent does not, returns no
// row, as in createTask.
func insertTasksSQL(n int) string {
	var b strings.Builder
	b.WriteString(`WITH u(ord, id, parent, queue, priority, spec, key, labels, tenant, submitted_by) AS (VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
	}
	b.WriteString(`)
INSERT INTO tasks (id, parent_id, root_id, depth, state, queue, priority, spec, idempotency_key, labels, created_at, updated_at,
	tenant, submitted_by)
SELECT u.id, p.id, coalesce(p.root_id, u.id), coalesce(p.depth + 1, 0), 'queued', u.queue, u.priority, u.spec, u.key, u.labels, ?, ?,
	coalesce(p.tenant, u.tenant), coalesce(p.submitted_by, u.submitted_by)
FROM u LEFT JOIN tasks p ON p.id = u.parent
WHERE u.parent IS NULL OR p.id IS NOT NULL
ORDER BY u.ord
ON CONFLICT (idempotency_key) DO NOTHING
RETURNING `)
	b.WriteString(taskCols)
	return b.String()
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

// insertBatch inserts tasks insertChunk at a time with one prepared
// statement, and then explains the tasks that returned no row: an existing
// idempotency key yields the task holding it (Existing); otherwise the
// parent is missing, which fails the batch.
func insertBatch(ctx context.Context, tx *sql.Tx, tasks []store.CreateTaskParams, now int64, out []store.CreateTaskResult) error {
	at := make(map[string]int, len(tasks))
	for i, t := range tasks {
		at[t.ID.String()] = i
	}
	var full *sql.Stmt
	for start := 0; start < len(tasks); start += insertChunk {
		chunk := tasks[start:min(start+insertChunk, len(tasks))]
		var stmt *sql.Stmt
		var err error
		if len(chunk) == insertChunk && full != nil {
			stmt = full
		} else if stmt, err = tx.PrepareContext(ctx, insertTasksSQL(len(chunk))); err != nil {
			return err
		}
		if len(chunk) == insertChunk {
			full = stmt
		}
		created, err := scanTasks(stmt.QueryContext(ctx, chunkArgs(chunk, start, now)...))
		if err != nil {
			return err
		}
		for _, t := range created {
			out[at[t.ID.String()]] = store.CreateTaskResult{Task: t}
		}
	}
	return explainMissing(ctx, tx, tasks, out)
}

// chunkArgs is the parameters of insertTasksSQL for chunk, whose first task
// is task start of the batch.
func chunkArgs(chunk []store.CreateTaskParams, start int, now int64) []any {
	args := make([]any, 0, 10*len(chunk)+2)
	for i, t := range chunk {
		args = append(args, start+i, t.ID.String(), idArg(t.ParentID), t.Queue, t.Priority,
			string(t.Spec), textArg(t.IdempotencyKey), labelsArg(t.Labels), t.Tenant, t.SubmittedBy)
	}
	return append(args, now, now)
}

// explainMissing fills the results insertBatch left empty from the tasks
// holding their idempotency keys; a task left without one had no parent.
func explainMissing(ctx context.Context, tx *sql.Tx, tasks []store.CreateTaskParams, out []store.CreateTaskResult) error {
	for i, t := range tasks {
		if out[i].Task.ID != uuid.Nil {
			continue
		}
		if t.IdempotencyKey != "" {
			held, err := scanTask(tx.QueryRowContext(ctx, `SELECT `+taskCols+` FROM tasks WHERE idempotency_key = ?`, t.IdempotencyKey))
			if err == nil {
				out[i] = store.CreateTaskResult{Task: held, Existing: true}
				continue
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		return store.NotFoundf("CreateTasks", "task %d of the batch: ParentID: no task %s", i, t.ParentID)
	}
	return nil
}
