package postgres

import (
	"context"
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
	rows, err := s.pool.Query(ctx, `SELECT `+taskCols+` FROM tasks`+w.sql()+
		fmt.Sprintf(" ORDER BY created_at, id LIMIT %d", p.Limit+1), w.args...)
	if err != nil {
		return store.ReportTasksResult{}, translate(op, err)
	}
	tasks, err := scanTasks(rows)
	if err != nil {
		return store.ReportTasksResult{}, translate(op, err)
	}
	ids := make([]uuid.UUID, len(tasks))
	for i, t := range tasks {
		ids[i] = t.ID
	}
	sums, err := s.pool.Query(ctx, `SELECT t.root_id::text, count(*),
		sum(s.input_tokens)::bigint, sum(s.output_tokens)::bigint, sum(s.reasoning_tokens)::bigint,
		sum(s.cache_read_tokens)::bigint, sum(s.cache_write_tokens)::bigint, sum(s.cost_usd)
		FROM sessions s JOIN tasks t ON t.id = s.task_id
		WHERE (t.parent_id IS NULL AND t.id = ANY($1::uuid[])) OR (t.parent_id IS NOT NULL AND t.root_id = ANY($1::uuid[]))
		GROUP BY t.root_id -- tasks_root_idx holds children only`, ids)
	if err != nil {
		return store.ReportTasksResult{}, translate(op, err)
	}
	defer sums.Close()
	res, err := store.JoinTreeUsage(tasks, p.Limit, sums)
	return res, translate(op, err)
}
