package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// where accumulates SQL conditions with "?" placeholders.
type where struct {
	conds []string
	args  []any
}

func (w *where) add(cond string, args ...any) {
	w.conds = append(w.conds, cond)
	w.args = append(w.args, args...)
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
	if tenants == nil {
		return
	}
	if len(tenants) == 0 {
		w.add("0 = 1")
		return
	}
	w.in(col, "IN", tenants)
}

// except leaves out the rows whose column col is one of tenants (none:
// no filter).
func (w *where) except(col string, tenants []string) {
	if len(tenants) > 0 {
		w.in(col, "NOT IN", tenants)
	}
}

// in adds "col op (?, ...)" with one placeholder per value.
func (w *where) in(col, op string, vals []string) {
	marks := make([]string, len(vals))
	for i, v := range vals {
		marks[i] = "?"
		w.args = append(w.args, v)
	}
	w.conds = append(w.conds, col+" "+op+" ("+strings.Join(marks, ", ")+")")
}

// common adds the filters ListTasks and CountTasks share.
func (w *where) common(queue string, root uuid.UUID, labels map[string]string, after, before time.Time) {
	if queue != "" {
		w.add("queue = ?", queue)
	}
	if root != uuid.Nil {
		w.add("root_id = ?", root.String())
	}
	for k, v := range labels {
		w.add("EXISTS (SELECT 1 FROM json_each(tasks.labels) WHERE key = ? AND value = ?)", k, v)
	}
	if !after.IsZero() {
		w.add("created_at >= ?", after.UnixMicro())
	}
	if !before.IsZero() {
		w.add("created_at < ?", before.UnixMicro())
	}
}

// ListTasks implements store.Store.
func (s *Store) ListTasks(ctx context.Context, p store.ListTasksParams) (store.TaskPage, error) {
	f, err := store.PrepareList(p)
	if err != nil {
		return store.TaskPage{}, err
	}
	var w where
	w.tenants("tenant", f.Tenants)
	w.common(f.Queue, f.RootID, f.Labels, f.CreatedAfter, f.CreatedBefore)
	if len(f.States) > 0 {
		marks := make([]string, len(f.States))
		for i, st := range f.States {
			marks[i] = "?"
			w.args = append(w.args, string(st))
		}
		w.conds = append(w.conds, "state IN ("+strings.Join(marks, ", ")+")")
	}
	if f.ParentID != uuid.Nil {
		w.add("parent_id = ?", f.ParentID.String())
	}
	if !f.HeartbeatBefore.IsZero() {
		w.add("state = 'running' AND heartbeat_at < ?", f.HeartbeatBefore.UnixMicro())
	}
	if f.AfterID != uuid.Nil {
		w.add("(created_at, id) < (?, ?)", f.AfterCreated.UnixMicro(), f.AfterID.String())
	}
	if f.Query != "" {
		w.add("id IN (SELECT id FROM tasks_fts WHERE tasks_fts MATCH ?)", ftsMatch(f.Search))
	}
	tasks, err := scanTasks(s.r.QueryContext(ctx, `SELECT `+taskCols+` FROM tasks`+w.sql()+
		fmt.Sprintf(" ORDER BY created_at DESC, id DESC LIMIT %d", f.Limit+1), w.args...))
	if err != nil {
		return store.TaskPage{}, translate("ListTasks", err)
	}
	return store.Page(tasks, f.Limit), nil
}

// TaskTree implements store.Store.
func (s *Store) TaskTree(ctx context.Context, p store.TaskTreeParams) ([]store.Task, error) {
	p, err := store.PrepareTree(p)
	if err != nil {
		return nil, err
	}
	tasks, err := scanTasks(s.r.QueryContext(ctx, `SELECT `+taskCols+` FROM tasks WHERE root_id = ?
ORDER BY depth, created_at, id LIMIT ?`, p.RootID.String(), p.Limit))
	if err != nil {
		return nil, translate("TaskTree", err)
	}
	if len(tasks) == 0 {
		return nil, store.NotFoundf("TaskTree", "no task tree with root %s", p.RootID)
	}
	return tasks, nil
}

// Children implements store.Store.
func (s *Store) Children(ctx context.Context, p store.ChildrenParams) (store.ChildrenResult, error) {
	tasks, err := scanTasks(s.r.QueryContext(ctx, `SELECT `+taskCols+` FROM tasks WHERE parent_id = ?
ORDER BY created_at, id`, p.ParentID.String()))
	if err != nil {
		return store.ChildrenResult{}, translate("Children", err)
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
	var w where
	w.tenants("tenant", p.Tenants)
	w.common(p.Queue, p.RootID, p.Labels, p.CreatedAfter, p.CreatedBefore)
	rows, err := s.r.QueryContext(ctx, `SELECT state, count(*) FROM tasks`+w.sql()+` GROUP BY state`, w.args...) //nolint:gosec // G202: w.sql() holds placeholders only; values go in w.args
	if err != nil {
		return nil, translate("CountTasks", err)
	}
	defer func() { _ = rows.Close() }()
	out := map[store.TaskState]int64{}
	for rows.Next() {
		var st store.TaskState
		var n int64
		if err := rows.Scan(&st, &n); err != nil {
			return nil, translate("CountTasks", err)
		}
		out[st] = n
	}
	return out, translate("CountTasks", rows.Err())
}
