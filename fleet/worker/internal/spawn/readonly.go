package spawn

import (
	"context"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/fleet"
)

// dirFor is the directory a new child works in: the parent's own for a
// read-only child (spawn_agent's read_only: it cannot write, so it shares
// the parent's tree and gets no worktree), else childDir's choice.
func (s *Spawner) dirFor(ctx context.Context, req agent.SpawnRequest) (string, error) {
	if req.ReadOnly {
		return s.p.WorkingDir, nil
	}
	return s.childDir(ctx, req.CallID)
}

// readOnlyPermissions is the permission policy of a read-only child whose
// parent's is p (nil: the operator's alone): p with mode plan
// (permission.ReadOnly), which the child's worker enforces on every call
// like any spec policy. Plan is the strictest mode, so it always narrows
// the operator's policy; ReadOnly reports the child as read-only.
func readOnlyPermissions(p *fleet.Permissions) *fleet.Permissions {
	var base permission.Policy
	if p != nil {
		base = *p
	}
	ro := permission.ReadOnly(base)
	return &ro
}
