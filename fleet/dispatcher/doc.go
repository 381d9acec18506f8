// Package dispatcher is the service behind the HTTP API: it validates
// submitted specs, stores them (a batch in one transaction, all or nothing)
// and enqueues their start messages, cancels subtrees, relays control
// requests to running sessions, records dead letters and keeps the
// statistics (Dispatcher). Handler serves the API of docs/api.md over it,
// with event streams (Server-Sent Events over the EVENTS stream) and
// Prometheus metrics.
//
// The handlers reach the dispatcher only through narrow interfaces: what
// it does (Submit, Cancel, Control, Stats), the store queries the API
// serves as they are, and the event reads. They never touch its fields,
// so a rule lives in the service and nowhere else.
//
// A task whose cost is counted (a cost limit, a budgeted label) on a model
// the dispatcher's prices do not know is refused at submission with a
// field error naming the model (prices.go); GET /v1/usage lists the spend
// of unpriced models apart (usage_unpriced.go).
//
// The API trusts nothing a browser sends by itself (http_guard.go): the
// token comes only from the Authorization header, event streams may take
// a signed single-use ticket instead (http_tickets.go), mutating requests
// must be JSON, requests from pages of other origins are refused, and
// without a token the Host header must name the dispatcher.
//
// Every /v1 request acts as an identity.Principal (http_auth.go: the
// bootstrap token, API tokens of the store, APIOptions.Authenticators),
// which routeAccess (http_roles.go) gives a role per route: another
// tenant's task is a 404, a role too low a 403. Submissions take the
// principal's tenant (http_tenants.go); API tokens are managed by admins
// (http_tokens.go); every mutating call is written to the audit log
// (audit.go). The actor of every record is the principal.
//
// Bulk actions (bulk.go, http_bulk.go) retry or cancel every task a
// filter selects through Submit and Cancel, as jobs whose progress is
// polled or streamed; retention (retention.go) sweeps the history of
// ended trees past their tenant's window in bounded batches.
//
// A follow-up of a task that succeeded or failed reopens it as a new
// round (reopen.go); GET /v1/tasks/{id}/rounds says what triggered each
// round and what became of its pull request (rounds.go). Cron schedules
// submit a task spec once per tick across dispatchers (schedules.go); a
// task with run_at is stored at once and started at its time by whichever
// dispatcher looks first (run_at.go). Forge webhooks, signed instead of
// carrying the token, start tasks from labelled issues and follow the
// pull requests they opened through CI failures, reviews and conflicts
// until they merge or close (forges.go, forges_follow.go).
//
// The fleet git store (gitstore.go) keeps a bare repository per task tree
// for the workers' traveling subagents; a tree's repository is released
// when its pull request concludes, or by an hourly sweep once the tree
// has had no live task for git_store.keep_after_end (gitstore_lease.go).
//
// The dispatcher never imports the worker package: the rules both sides
// apply live in fleet/internal/taskops.
package dispatcher
