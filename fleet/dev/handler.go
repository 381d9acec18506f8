package dev

import (
	"net/http"

	"github.com/agentfleet/agentfleet/fleet/dashboard"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
)

// Handler is what dev mode serves on its address: the dashboard and d's
// API, behind opts.Token ("" with --no-auth) and the API's request guard
// (fleet/dispatcher/http_guard.go) for a server listening on
// opts.ListenAddr. It is exported so that a test can put dev mode's HTTP
// face on a fleet of its own (fleet/fleettest/trust).
func Handler(d *dispatcher.Dispatcher, opts dispatcher.APIOptions) http.Handler {
	return dashboard.With(d.Handler(opts))
}
