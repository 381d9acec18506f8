package postgres

import (
	"context"
	"fmt"

	"github.com/agentfleet/agentfleet/store"
)

var _ store.Sweeper = (*Store)(nil)

// Sweep implements store.Sweeper: one DELETE of at most p.Limit rows, its
// own short transaction.
func (s *Store) Sweep(ctx context.Context, p store.SweepParams) (int64, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	var w where
	w.add("state IN ('succeeded', 'failed', 'cancelled')")
	w.add("finished_at < ?", p.EndedBefore)
	w.tenants("tenant", p.Tenants)
	w.except("tenant", p.ExceptTenants)
	// Nothing of the tree is active: neither its root nor, through the
	// partial tasks_root_idx, any of its descendants.
	w.add("NOT EXISTS (SELECT 1 FROM tasks l WHERE l.id = tasks.root_id AND l.state IN ('queued', 'running', 'waiting'))")
	w.add("NOT EXISTS (SELECT 1 FROM tasks l WHERE l.parent_id IS NOT NULL AND l.root_id = tasks.root_id AND l.state IN ('queued', 'running', 'waiting'))")
	ended := "SELECT id FROM tasks" + w.sql()
	w.args = append(w.args, p.SweepLimit())
	limit := fmt.Sprintf("$%d", len(w.args))
	var q string
	switch p.Kind {
	case store.RetainTurns:
		q = `DELETE FROM turns WHERE (session_id, seq) IN (SELECT session_id, seq FROM turns
WHERE session_id IN (SELECT id FROM sessions WHERE task_id IN (` + ended + `)) LIMIT ` + limit + `)`
	case store.RetainToolOutputs:
		q = `DELETE FROM tool_outputs WHERE (session_id, call_id) IN (SELECT session_id, call_id FROM tool_outputs
WHERE session_id IN (SELECT id FROM sessions WHERE task_id IN (` + ended + `)) LIMIT ` + limit + `)`
	case store.RetainArtifacts:
		q = `DELETE FROM artifacts WHERE (task_id, kind, name) IN (SELECT a.task_id, a.kind, a.name FROM artifacts a
WHERE a.task_id IN (` + ended + `) AND EXISTS (SELECT 1 FROM artifacts n WHERE n.kind = a.kind AND n.name = a.name
AND (n.created_at > a.created_at OR (n.created_at = a.created_at AND n.task_id > a.task_id))) LIMIT ` + limit + `)`
	}
	tag, err := s.pool.Exec(ctx, q, w.args...)
	if err != nil {
		return 0, translate("Sweep", err)
	}
	return tag.RowsAffected(), nil
}
