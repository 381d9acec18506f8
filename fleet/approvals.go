package fleet

import (
	"encoding/json"
	"time"
)

// PendingApproval is a tool call a parked task waits for a person to
// approve or deny (WaitingFor.Approvals). Arguments are the call's as the
// model gave them; Rule and Reason say what asked.
type PendingApproval struct {
	CallID      string          `json:"call_id"`
	Tool        string          `json:"tool"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	Rule        string          `json:"rule"`
	Reason      string          `json:"reason,omitempty"`
	Summary     string          `json:"summary,omitempty"`
	RequestedAt time.Time       `json:"requested_at"`
	// ExpiresAt is when an unanswered request is denied (the worker's
	// approval_timeout after RequestedAt).
	ExpiresAt time.Time `json:"expires_at"`
}

// DefaultApprovalTimeout is how long a pending approval waits for an
// answer before it is denied, unless the worker configures otherwise.
const DefaultApprovalTimeout = 24 * time.Hour

// Approval returns the pending approval of call id, if w waits for it.
func (w WaitingFor) Approval(callID string) (PendingApproval, bool) {
	for _, a := range w.Approvals {
		if a.CallID == callID {
			return a, true
		}
	}
	return PendingApproval{}, false
}
