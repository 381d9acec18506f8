package postgres

import (
	"context"

	"github.com/agentfleet/agentfleet/store"
)

// Usage sums sessions joined to their tasks (see store.Store).
func (s *Store) Usage(ctx context.Context, p store.UsageParams) ([]store.UsageRow, error) {
	const op = "Usage"
	if err := store.CheckUsageParams(p); err != nil {
		return nil, err
	}
	var w where
	key := "''"
	switch p.GroupBy {
	case store.GroupLabel:
		w.args = append(w.args, p.LabelKey)
		key = "COALESCE(t.labels->>$1, '')"
	case store.GroupProfile:
		key = "s.profile"
	case store.GroupModel:
		key = "s.model"
	case store.GroupDay:
		key = "to_char(s.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')"
	}
	w.tenants("t.tenant", p.Tenants)
	if len(p.Labels) > 0 {
		w.add("t.labels <> '{}'::jsonb AND t.labels @> ?::jsonb", labelsArg(p.Labels)) // see tasks_labels_idx
	}
	if !p.Since.IsZero() {
		w.add("s.created_at >= ?", p.Since)
	}
	if !p.Until.IsZero() {
		w.add("s.created_at < ?", p.Until)
	}
	q := `SELECT ` + key + ` AS k, count(DISTINCT s.task_id), count(*),
		sum(s.input_tokens)::bigint, sum(s.output_tokens)::bigint, sum(s.reasoning_tokens)::bigint,
		sum(s.cache_read_tokens)::bigint, sum(s.cache_write_tokens)::bigint, sum(s.cost_usd)
		FROM sessions s JOIN tasks t ON t.id = s.task_id` + w.sql() + ` GROUP BY k ORDER BY k`
	rows, err := s.pool.Query(ctx, q, w.args...)
	if err != nil {
		return nil, translate(op, err)
	}
	defer rows.Close()
	out, err := store.ScanUsage(rows)
	return out, translate(op, err)
}
