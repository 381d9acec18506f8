package sqlite

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
		key = "COALESCE((SELECT value FROM json_each(t.labels) WHERE key = ?), '')"
	case store.GroupProfile:
		key = "s.profile"
	case store.GroupModel:
		key = "s.model"
	case store.GroupDay:
		key = "strftime('%Y-%m-%d', s.created_at / 1000000, 'unixepoch')"
	}
	w.tenants("t.tenant", p.Tenants)
	for k, v := range p.Labels {
		w.add("EXISTS (SELECT 1 FROM json_each(t.labels) WHERE key = ? AND value = ?)", k, v)
	}
	if !p.Since.IsZero() {
		w.add("s.created_at >= ?", p.Since.UnixMicro())
	}
	if !p.Until.IsZero() {
		w.add("s.created_at < ?", p.Until.UnixMicro())
	}
	//nolint:gosec // G202: key comes from a fixed switch, w.sql() holds placeholders only
	q := `SELECT ` + key + ` AS k, count(DISTINCT s.task_id), count(*),
		sum(s.input_tokens), sum(s.output_tokens), sum(s.reasoning_tokens),
		sum(s.cache_read_tokens), sum(s.cache_write_tokens), sum(s.cost_usd)
		FROM sessions s JOIN tasks t ON t.id = s.task_id` + w.sql() + ` GROUP BY k ORDER BY k`
	rows, err := s.r.QueryContext(ctx, q, w.args...) //nolint:rowserrcheck // store.ScanUsage returns rows.Err()
	if err != nil {
		return nil, translate(op, err)
	}
	defer func() { _ = rows.Close() }()
	out, err := store.ScanUsage(rows)
	return out, translate(op, err)
}
