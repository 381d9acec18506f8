package postgres

import (
	"context"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentfleet/agentfleet/store"
)

// insertTasks inserts a whole batch in one statement: the columns arrive as
// arrays and unnest turns them back into rows, in the batch's order (ord),
// so that of two tasks with one idempotency key the first is inserted. A
// task whose key exists, or whose parent does not, returns no row, as in
// insertTask; the zero UUID and "" stand for NULL in the arrays.
const insertTasks = `
INSERT INTO tasks (id, parent_id, root_id, depth, state, queue, priority, spec,
	idempotency_key, labels, created_at, updated_at, tenant, submitted_by)
SELECT u.id, p.id, coalesce(p.root_id, u.id), coalesce(p.depth + 1, 0), 'queued',
	u.queue, u.priority, u.spec::jsonb, nullif(u.key, ''), u.labels::jsonb, $8::timestamptz, $8::timestamptz,
	coalesce(p.tenant, u.tenant), coalesce(p.submitted_by, u.submitted_by)
FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $9::text[], $10::text[])
	WITH ORDINALITY AS u(id, parent_id, queue, priority, spec, key, labels, tenant, submitted_by, ord)
LEFT JOIN tasks p ON p.id = nullif(u.parent_id, '00000000-0000-0000-0000-000000000000'::uuid)
WHERE u.parent_id = '00000000-0000-0000-0000-000000000000'::uuid OR p.id IS NOT NULL
ORDER BY u.ord
ON CONFLICT (idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
RETURNING ` + taskCols

// insertBatch inserts tasks with insertTasks, one round trip for the whole
// batch, and then explains the tasks that returned no row with one more: an
// existing idempotency key yields the task that holds it (Existing), and
// otherwise the parent is missing, which fails the batch.
func (s *Store) insertBatch(ctx context.Context, tx pgx.Tx, tasks []store.CreateTaskParams, now time.Time, out []store.CreateTaskResult) error {
	n := len(tasks)
	ids, parents := make([]pgtype.UUID, n), make([]pgtype.UUID, n)
	queues, specs, keys, labels := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	prios := make([]int32, n)
	tenants, submitters := make([]string, n), make([]string, n)
	at := make(map[uuid.UUID]int, n)
	for i, t := range tasks {
		ids[i], parents[i] = pgtype.UUID{Bytes: t.ID, Valid: true}, pgtype.UUID{Bytes: t.ParentID, Valid: true}
		queues[i], prios[i] = t.Queue, int32(t.Priority)
		specs[i], keys[i], labels[i] = string(t.Spec), t.IdempotencyKey, labelsArg(t.Labels)
		tenants[i], submitters[i] = t.Tenant, t.SubmittedBy
		at[t.ID] = i
	}
	rows, err := tx.Query(ctx, insertTasks, ids, parents, queues, prios, specs, keys, labels, now, tenants, submitters)
	if err != nil {
		return err
	}
	created, err := scanTasks(rows)
	if err != nil {
		return err
	}
	for _, t := range created {
		out[at[t.ID]] = store.CreateTaskResult{Task: t}
	}
	if len(created) == n {
		return nil
	}
	return s.explainMissing(ctx, tx, tasks, out)
}

// explainMissing fills the results of the tasks insertBatch did not insert
// from the tasks holding their idempotency keys; a task left without one
// had no parent.
func (s *Store) explainMissing(ctx context.Context, tx pgx.Tx, tasks []store.CreateTaskParams, out []store.CreateTaskResult) error {
	var keys []string
	for i, t := range tasks {
		if out[i].Task.ID == uuid.Nil && t.IdempotencyKey != "" {
			keys = append(keys, t.IdempotencyKey)
		}
	}
	byKey := map[string]store.Task{}
	if len(keys) > 0 {
		rows, err := tx.Query(ctx, `SELECT `+taskCols+` FROM tasks WHERE idempotency_key = ANY($1)`, keys)
		if err != nil {
			return err
		}
		held, err := scanTasks(rows)
		if err != nil {
			return err
		}
		for _, t := range held {
			byKey[t.IdempotencyKey] = t
		}
	}
	for i, t := range tasks {
		if out[i].Task.ID != uuid.Nil {
			continue
		}
		if held, ok := byKey[t.IdempotencyKey]; ok && t.IdempotencyKey != "" {
			out[i] = store.CreateTaskResult{Task: held, Existing: true}
			continue
		}
		return store.NotFoundf("CreateTasks", "task %d of the batch: ParentID: no task %s", i, t.ParentID)
	}
	return nil
}
