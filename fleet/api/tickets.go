package api

import "time"

// StreamTicket is the answer to POST /v1/stream-tickets: a short-lived,
// single-use credential for one event stream (GET .../events?ticket=...),
// so that a browser's EventSource, which cannot send an Authorization
// header, never puts the bearer token in a URL.
type StreamTicket struct {
	Ticket    string    `json:"ticket"`
	ExpiresAt time.Time `json:"expires_at"`
}
