package sqlite

import (
	"context"

	"github.com/agentfleet/agentfleet/store"
)

var _ store.Sweeper = (*Store)(nil)

// Sweep implements store.Sweeper: one DELETE of at most p.Limit rows on
// the writer connection.
func (s *Store) Sweep(ctx context.Context, p store.SweepParams) (int64, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	var w where
	w.add("state IN ('succeeded', 'failed', 'cancelled')")
	w.add("finished_at < ?", p.EndedBefore.UnixMicro())
	w.tenants("tenant", p.Tenants)
	w.except("tenant", p.ExceptTenants)
	w.add("NOT EXISTS (SELECT 1 FROM tasks l WHERE l.root_id = tasks.root_id AND l.state IN ('queued', 'running', 'waiting'))")
	ended := "SELECT id FROM tasks" + w.sql()
	var q string
	switch p.Kind {
	case store.RetainTurns:
		q = `DELETE FROM turns WHERE (session_id, seq) IN (SELECT session_id, seq FROM turns
WHERE session_id IN (SELECT id FROM sessions WHERE task_id IN (` + ended + `)) LIMIT ?)`
	case store.RetainToolOutputs:
		q = `DELETE FROM tool_outputs WHERE (session_id, call_id) IN (SELECT session_id, call_id FROM tool_outputs
WHERE session_id IN (SELECT id FROM sessions WHERE task_id IN (` + ended + `)) LIMIT ?)`
	case store.RetainArtifacts:
		q = `DELETE FROM artifacts WHERE (task_id, kind, name) IN (SELECT a.task_id, a.kind, a.name FROM artifacts a
WHERE a.task_id IN (` + ended + `) AND EXISTS (SELECT 1 FROM artifacts n WHERE n.kind = a.kind AND n.name = a.name
AND (n.created_at > a.created_at OR (n.created_at = a.created_at AND n.task_id > a.task_id))) LIMIT ?)`
	}
	res, err := s.w.ExecContext(ctx, q, append(w.args, p.SweepLimit())...)
	if err != nil {
		return 0, translate("Sweep", err)
	}
	n, err := res.RowsAffected()
	return n, translate("Sweep", err)
}
