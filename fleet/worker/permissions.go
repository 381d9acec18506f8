package worker

import (
	"fmt"

	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/fleet/approval"
)

// permissions builds the session's permission checker (the operator's
// policy narrowed by the spec's) and its approver, which parks the session
// on every call the policy asks about (package fleet/approval). A spec
// that widens the operator's policy is refused.
func (r *run) permissions() (*permission.Checker, error) {
	op := r.w.cfg.Permissions
	var narrow []permission.Policy
	if p := r.spec.Permissions; p != nil {
		if err := r.spec.PermissionsWithin(op); err != nil {
			return nil, fmt.Errorf("%w: %v", errNotAllowed, err)
		}
		narrow = append(narrow, *p)
	}
	r.approvals = approval.NewParker(r.w.cfg.ApprovalTimeout, r.w.clock.Now)
	return permission.NewChecker(op, narrow...), nil
}
