package worker

import (
	"fmt"

	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/fleet/approval"
)

// permissions builds the session's permission checker and the approver
// that parks it on every call the policy asks about (fleet/approval). A
// spec that widens the operator's policy is refused.
func (r *run) permissions() (k *permission.Checker, err error) {
	k, r.approvals, err = approval.ForTask(r.w.cfg.Permissions, r.spec, r.w.cfg.ApprovalTimeout, r.w.clock.Now)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNotAllowed, err)
	}
	return k, nil
}
