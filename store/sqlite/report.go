package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// ReportTasks returns the root tasks p selects with the session sums of
// their trees (see store.Store).
func (s *Store) ReportTasks(ctx context.Context, p store.ReportTasksParams) (store.ReportTasksResult, error) {
	const op = "ReportTasks"
	p, err := store.PrepareReportTasks(p)
	if err != nil {
		return store.ReportTasksResult{}, err
	}
	var w where
	w.add("depth = 0")
	w.tenants("tenant", p.Tenants)
	w.common("", uuid.Nil, p.Labels, p.CreatedAfter, p.CreatedBefore)
	tasks, err := scanTasks(s.r.QueryContext(ctx, `SELECT `+taskCols+` FROM tasks`+w.sql()+
		fmt.Sprintf(" ORDER BY created_at, id LIMIT %d", p.Limit+1), w.args...))
	if err != nil {
		return store.ReportTasksResult{}, translate(op, err)
	}
	ids := make([]string, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID.String()
	}
	idList, _ := json.Marshal(ids) // strings always marshal
	const q = `SELECT t.root_id, count(*),
		sum(s.input_tokens), sum(s.output_tokens), sum(s.reasoning_tokens),
		sum(s.cache_read_tokens), sum(s.cache_write_tokens), sum(s.cost_usd)
		FROM sessions s JOIN tasks t ON t.id = s.task_id
		WHERE t.root_id IN (SELECT value FROM json_each(?)) GROUP BY t.root_id`
	sums, err := s.r.QueryContext(ctx, q, string(idList)) //nolint:rowserrcheck // store.JoinTreeUsage returns rows.Err()
	if err != nil {
		return store.ReportTasksResult{}, translate(op, err)
	}
	defer func() { _ = sums.Close() }()
	res, err := store.JoinTreeUsage(tasks, p.Limit, sums)
	return res, translate(op, err)
}
