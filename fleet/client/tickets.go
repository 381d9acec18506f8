package client

import (
	"context"
	"net/http"

	"github.com/agentfleet/agentfleet/fleet/api"
)

// StreamTicket asks for a single-use ticket that opens one event stream
// within a minute (GET .../events?ticket=...), for a program that hands
// the stream to something that cannot send the bearer token, such as a
// browser's EventSource. The client's own streams send the token.
func (c *Client) StreamTicket(ctx context.Context) (api.StreamTicket, error) {
	var out api.StreamTicket
	return out, c.do(ctx, http.MethodPost, "/v1/stream-tickets", nil, struct{}{}, &out)
}
