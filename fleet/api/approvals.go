package api

import (
	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/fleet"
)

// Decisions of ApprovalRequest.Decision.
const (
	DecisionApprove = "approve"
	DecisionDeny    = "deny"
)

// ApprovalRequest is the body of POST /v1/tasks/{id}/approvals/{call_id}.
type ApprovalRequest struct {
	Decision string `json:"decision"`         // approve or deny
	Reason   string `json:"reason,omitempty"` // told to the model on a denial
	// Remember applies the answer to the task's later calls of the same
	// tool that the same rule asks about.
	Remember bool   `json:"remember,omitempty"`
	By       string `json:"by,omitempty"` // deprecated: the principal is recorded; any other name is a 400
}

// ApprovalResponse answers an approval: the call that was pending, and the
// decision recorded. The task is queued to resume.
type ApprovalResponse struct {
	Call     fleet.PendingApproval `json:"call"`
	Decision string                `json:"decision"`
}

// PermissionsView answers GET /v1/tasks/{id}/permissions: the calls
// waiting for an answer and the session's permission records (denials
// with tool, rule, reason and argument summary; answers), oldest first.
type PermissionsView struct {
	Pending []fleet.PendingApproval `json:"pending"`
	Records []permission.Record     `json:"records"`
}
