package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// where accumulates SQL conditions; each "?" in a condition becomes the next $n.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	for _, a := range args {
		w.args = append(w.args, a)
		cond = strings.Replace(cond, "?", fmt.Sprintf("$%d", len(w.args)), 1)
	}
	w.conds = append(w.conds, cond)
}

func (w *where) sql() string {
	if len(w.conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(w.conds, " AND ")
}

// tenants keeps the rows whose column col is one of tenants (nil: no
// filter; empty: no row).
func (w *where) tenants(col string, tenants []string) {
	if tenants != nil {
		w.add(col+" = ANY(?::text[])", tenants)
	}
}

// except leaves out the rows whose column col is one of tenants (none:
// no filter).
func (w *where) except(col string, tenants []string) {
	if len(tenants) > 0 {
		w.add("NOT ("+col+" = ANY(?::text[]))", tenants)
	}
}

// common adds the filters ListTasks and CountTasks share.
func (w *where) common(queue string, root uuid.UUID, labels map[string]string, after, before time.Time) {
	if queue != "" {
		w.add("queue = ?", queue)
	}
	if root != uuid.Nil {
		w.add(inTree, root, root)
	}
	if len(labels) > 0 {
		w.add("labels <> '{}'::jsonb AND labels @> ?::jsonb", labelsArg(labels)) // the predicate of the partial tasks_labels_idx
	}
	if !after.IsZero() {
		w.add("created_at >= ?", after)
	}
	if !before.IsZero() {
		w.add("created_at < ?", before)
	}
}

// ListTasks implements store.Store.
func (s *Store) ListTasks(ctx context.Context, p store.ListTasksParams) (store.TaskPage, error) {
	const op = "ListTasks"
	f, err := store.PrepareList(p)
	if err != nil {
		return store.TaskPage{}, err
	}
	var w where
	w.tenants("tenant", f.Tenants)
	w.common(f.Queue, f.RootID, f.Labels, f.CreatedAfter, f.CreatedBefore)
	if len(f.States) > 0 {
		w.add("state = ANY(?::text[])", statesArg(f.States))
	}
	if f.ParentID != uuid.Nil {
		w.add("parent_id = ?", f.ParentID)
	}
	if !f.HeartbeatBefore.IsZero() {
		w.add("state = 'running' AND heartbeat_at < ?", f.HeartbeatBefore)
	}
	if f.AfterID != uuid.Nil {
		w.add("(created_at, id) < (?, ?)", f.AfterCreated, f.AfterID)
	}
	if f.Query != "" {
		// task_search holds the vectors (migration 00007).
		w.add("id IN (SELECT task_id FROM task_search WHERE search @@ websearch_to_tsquery('english', ?))", f.Query)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+taskCols+` FROM tasks`+w.sql()+
		fmt.Sprintf(" ORDER BY created_at DESC, id DESC LIMIT %d", f.Limit+1), w.args...)
	if err != nil {
		return store.TaskPage{}, translate(op, err)
	}
	tasks, err := scanTasks(rows)
	if err != nil {
		return store.TaskPage{}, translate(op, err)
	}
	return store.Page(tasks, f.Limit), nil
}

// TaskTree implements store.Store.
func (s *Store) TaskTree(ctx context.Context, p store.TaskTreeParams) ([]store.Task, error) {
	const op = "TaskTree"
	p, err := store.PrepareTree(p)
	if err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT `+taskCols+` FROM tasks WHERE `+treeOf("$1")+`
ORDER BY depth, created_at, id LIMIT $2`, p.RootID, p.Limit)
	if err != nil {
		return nil, translate(op, err)
	}
	tasks, err := scanTasks(rows)
	if err != nil {
		return nil, translate(op, err)
	}
	if len(tasks) == 0 {
		return nil, store.NotFoundf(op, "no task tree with root %s", p.RootID)
	}
	return tasks, nil
}

// Children implements store.Store.
func (s *Store) Children(ctx context.Context, p store.ChildrenParams) (store.ChildrenResult, error) {
	const op = "Children"
	rows, err := s.pool.Query(ctx, `SELECT `+taskCols+` FROM tasks WHERE parent_id = $1
ORDER BY created_at, id`, p.ParentID)
	if err != nil {
		return store.ChildrenResult{}, translate(op, err)
	}
	tasks, err := scanTasks(rows)
	if err != nil {
		return store.ChildrenResult{}, translate(op, err)
	}
	if len(tasks) == 0 {
		if _, err := s.GetTask(ctx, store.GetTaskParams{ID: p.ParentID}); err != nil {
			return store.ChildrenResult{}, err
		}
	}
	return store.ChildrenResult{Children: tasks}, nil
}

// CountTasks implements store.Store.
func (s *Store) CountTasks(ctx context.Context, p store.CountTasksParams) (map[store.TaskState]int64, error) {
	const op = "CountTasks"
	var w where
	w.tenants("tenant", p.Tenants)
	w.common(p.Queue, p.RootID, p.Labels, p.CreatedAfter, p.CreatedBefore)
	rows, err := s.pool.Query(ctx, `SELECT state, count(*) FROM tasks`+w.sql()+` GROUP BY state`, w.args...)
	if err != nil {
		return nil, translate(op, err)
	}
	defer rows.Close()
	out := map[store.TaskState]int64{}
	for rows.Next() {
		var st store.TaskState
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			return nil, translate(op, err)
		}
		out[st] = n
	}
	return out, translate(op, rows.Err())
}

// inTree matches the tasks of the tree whose root is the two placeholders'
// value (pass the root twice). tasks_root_idx holds only children
// (parent_id IS NOT NULL: a root task's row is found by its id), so a claim
// or an end of a root task, most tasks, writes one index entry fewer.
var inTree = treeOf("?")

// treeOf is the condition of inTree with param for the root: a numbered
// parameter ("$1") is used twice, "?" takes two arguments.
func treeOf(param string) string {
	return "((parent_id IS NULL AND id = " + param + ") OR (parent_id IS NOT NULL AND root_id = " + param + "))"
}
