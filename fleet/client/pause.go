package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/agentfleet/agentfleet/fleet/api"
)

// PauseQueue stops every worker pulling queue q (admin in every tenant).
func (c *Client) PauseQueue(ctx context.Context, q, reason string) (api.PauseView, error) {
	var out api.PauseView
	return out, c.do(ctx, http.MethodPost, "/v1/queues/"+url.PathEscape(q)+"/pause", nil, api.PauseQueueRequest{Reason: reason}, &out)
}

// ResumeQueue lets workers pull queue q again; a queue not paused is a
// 404 (*APIError).
func (c *Client) ResumeQueue(ctx context.Context, q string) error {
	return c.do(ctx, http.MethodPost, "/v1/queues/"+url.PathEscape(q)+"/resume", nil, nil, nil)
}

// Pauses lists the pauses in force and how many tasks are held.
func (c *Client) Pauses(ctx context.Context) (api.PausesView, error) {
	var out api.PausesView
	return out, c.do(ctx, http.MethodGet, "/v1/pauses", nil, nil, &out)
}
