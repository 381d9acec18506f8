package client

import (
	"context"
	"net/http"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/api"
)

// Trace returns where task id's trace is: its trace id and the link to it
// in the operator's tracing UI (GET /v1/tasks/{id}/trace).
func (c *Client) Trace(ctx context.Context, id uuid.UUID) (api.TraceView, error) {
	var out api.TraceView
	return out, c.do(ctx, http.MethodGet, "/v1/tasks/"+id.String()+"/trace", nil, nil, &out)
}
