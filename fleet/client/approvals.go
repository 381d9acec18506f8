package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/api"
)

// Decide approves or denies a tool call of a task that waits for a
// person's approval (req.Decision is api.DecisionApprove or
// api.DecisionDeny). A call that is not pending is a 409 (*Error).
func (c *Client) Decide(ctx context.Context, id uuid.UUID, callID string, req api.ApprovalRequest) (api.ApprovalResponse, error) {
	var out api.ApprovalResponse
	path := "/v1/tasks/" + id.String() + "/approvals/" + url.PathEscape(callID)
	return out, c.do(ctx, http.MethodPost, path, nil, req, &out)
}

// Permissions returns a task's calls pending approval and its permission
// records (denials, answers).
func (c *Client) Permissions(ctx context.Context, id uuid.UUID) (api.PermissionsView, error) {
	var out api.PermissionsView
	return out, c.do(ctx, http.MethodGet, "/v1/tasks/"+id.String()+"/permissions", nil, nil, &out)
}
