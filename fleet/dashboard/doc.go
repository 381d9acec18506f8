// Package dashboard serves the agentfleet web dashboard: one page of plain
// HTML, CSS and JavaScript embedded in the binary (no build step, no npm),
// talking to the dispatcher's HTTP API (docs/api.md) from the browser.
//
// # What it shows
//
// Live counts of tasks by state (click one to filter), queue lag and
// throughput from GET /v1/stats; the task list, with a search box that asks
// the server for the tasks whose prompt, final answer or failure reason
// match (GET /v1/tasks?q=, search.js); for the selected task its
// tree of parents and children, its events streamed live from the
// Server-Sent Events endpoint (replayed from the start on reload, so a page
// reload loses nothing the EVENTS stream still holds), the turns stored for
// its sessions, and its workspace diff; buttons to submit, steer, follow up,
// cancel and abort. The selected task is in the URL fragment (#task=<id>).
//
// # Mounting
//
// Handler serves only the dashboard's own files. With wraps an API handler
// so that GET / and the assets go to the dashboard and every other path
// (/v1/, /healthz, /readyz, /metrics) to the API: the page calls the API on
// the same origin, so no CORS is needed.
//
// # Authentication
//
// The files themselves are public (they hold no data). When the dispatcher
// requires a bearer token, open the page once with #token=<token> (what
// `agentfleet-dev dev` prints; a fragment is never sent to a server) or
// ?token=<token>: the page keeps it in sessionStorage (this tab only),
// removes it from the address bar at once and sends it as "Authorization:
// Bearer" on API calls. Event streams (EventSource cannot set headers)
// open with a single-use ticket from POST /v1/stream-tickets, never with
// the token in their URL; a stream that drops is reopened with a new
// ticket after the last event it received. Without a stored token a 401
// shows a form asking for one and, when the dispatcher has single sign-on
// (GET /auth/ answers), a link to log in through the OpenID provider
// (internal/oidcauth); the session cookie it sets then authenticates the
// page's requests and streams.
//
// # Who is logged in
//
// who.js reads GET /v1/whoami: the header shows the principal's name,
// default tenant and role there, and the page hides the controls the
// role may not use (submit, steer, follow up, cancel and abort below
// submitter in the task's tenant; approve and deny below approver;
// budgets below admin). The API enforces the roles; hiding spares the
// user refused clicks. A dispatcher without /v1/whoami shows everything.
//
// # Backlog reports
//
// report.js draws the Backlog report panel from GET /v1/reports: a
// summary table (one column per filter, formatted exactly as `dispatcher
// report --format md`, fleet/report), the success rate of each filter
// with its 95% Wilson score interval, and per filter the burn-down
// (queued, running, succeeded, failed, stacked over time), the outcome
// table and the top failure reasons with links to example tasks. Charts
// are inline SVG drawn by the page itself (no chart library; the CSP
// allows only the page's own scripts and styles).
//
// # Task timeline
//
// timeline.js draws the selected task's Timeline tab: a waterfall of its
// queue wait, model calls, tool calls, checks, parked and approval time,
// compactions and delivery, built from the events the page already
// streams (app.js hands each to timelineEvent). Above it, a link to the
// task's trace in the operator's tracing UI, from GET /v1/tasks/{id}/trace
// (the dispatcher's tracing.ui_url with the trace id of the task's tree):
// shown when the UI is configured and the trace was kept (sampled, or the
// task failed); a trace the sampler dropped gets a note instead.
//
// # Rounds and schedules
//
// rounds.js shows, under the selected task's outcome, its rounds (GET
// /v1/tasks/{id}/rounds: the first run and each follow-up with what
// triggered it, the API, a schedule or a forge event such as a CI repair)
// and its pull request's state (open, merged, closed); it refetches when
// the task's state or end time changes. Follow up is enabled on a task
// that ended (succeeded or failed): it reopens it as the next round.
// schedules.js lists the cron schedules in the Schedules box when it is
// opened, with pause, resume and delete.
//
// Handler is safe for concurrent use; the assets are immutable.
package dashboard
