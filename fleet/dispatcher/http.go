package dispatcher

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/approval"
	"github.com/agentfleet/agentfleet/fleet/internal/storegate"
	"github.com/agentfleet/agentfleet/internal/identity"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/agentfleet/agentfleet/fleet/dispatcher/webhook"
)

// APIOptions configure the HTTP API.
type APIOptions struct {
	// Token is the bearer token every /v1 request must carry
	// ("Authorization: Bearer <token>"; an event stream may instead carry
	// ?ticket= from POST /v1/stream-tickets). A token is never accepted in
	// a URL. The token is the bootstrap principal's, admin of every
	// tenant; API tokens (POST /v1/tokens) name principals with roles (see
	// http_auth.go). Empty, with no Authenticators, disables
	// authentication: a request without a credential acts as
	// AnonymousPrincipal; the caller decides when that is allowed (dev
	// mode's --no-auth, serve's no_auth).
	Token string
	// Authenticators are further ways to authenticate, asked after the
	// bootstrap token and the API tokens (http_auth.go): single sign-on's
	// bearer tokens and dashboard sessions (internal/oidcauth).
	Authenticators []identity.Authenticator
	// ListenAddr is the address the server listens on ("127.0.0.1:8080",
	// ":8080"); its host is an allowed Host header (see http_guard.go).
	ListenAddr string
	// AllowedHosts are further names the Host header may carry (the names
	// a proxy or users reach the API by; "*.example.com" admits
	// subdomains). Setting it turns the Host check on even with a token.
	AllowedHosts []string
	// TicketTTL is how long a stream ticket is valid (default
	// DefaultTicketTTL).
	TicketTTL time.Duration
	// Ready reports whether the dispatcher can serve (/readyz); default: the
	// store answers a ping.
	Ready func(ctx context.Context) error
	// SSEHeartbeat is how often an idle event stream gets a comment line
	// (default 15 s), so that proxies keep it open.
	SSEHeartbeat time.Duration
	// SSEDonePoll is how often a task's event stream checks whether the
	// task has finished (default 1 s); SSEDrainIdle how long the stream of
	// a finished task waits without an event, once it has sent the events
	// stored when the task finished, before it ends (default 1 s).
	SSEDonePoll  time.Duration
	SSEDrainIdle time.Duration
	// TraceUIURL links a task's trace in the operator's tracing UI: a URL
	// with {trace_id} (tracing.ui_url; internal/tracing.CheckUIURL), served
	// by GET /v1/tasks/{id}/trace for the dashboard's timeline. "" for none.
	TraceUIURL string
}

// Handler returns the HTTP API of docs/api.md: /v1/... behind the bearer
// token, and /healthz, /readyz and /metrics without it.
func (d *Dispatcher) Handler(opts APIOptions) http.Handler {
	if opts.Ready == nil {
		opts.Ready = d.store.Ping
	}
	if opts.SSEHeartbeat <= 0 {
		opts.SSEHeartbeat = 15 * time.Second
	}
	if opts.SSEDonePoll <= 0 {
		opts.SSEDonePoll = time.Second
	}
	if opts.SSEDrainIdle <= 0 {
		opts.SSEDrainIdle = time.Second
	}
	a := newHandlers(d, opts)
	v1 := http.NewServeMux()
	for pattern, h := range a.routes() {
		v1.HandleFunc(pattern, h)
	}
	root := http.NewServeMux()
	root.Handle("/v1/", a.guardOrigin(refuseURLToken(a.authenticate(a.audit(a.authorize(requireJSON(v1), v1), v1), v1))))
	// Forge webhooks authenticate by their signature, not the token (forges.go).
	root.HandleFunc(forgeEventsRoute, a.forgeEvents)
	root.Handle(gitStoreRoute, d.gitStore()) // the fleet git store authenticates by tree tokens (gitstore.go)
	root.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	root.HandleFunc("GET /readyz", a.ready)
	root.Handle("GET /metrics", promhttp.HandlerFor(d.metrics.Registry, promhttp.HandlerOpts{}))
	return traceHTTP(a.instrument(a.guardHost(root), v1))
}

// routes maps the /v1 patterns to their handlers (docs/openapi.yaml
// documents each one; a test checks).
func (a *handlers) routes() map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{
		"POST /v1/stream-tickets":                      a.streamTicket,
		"POST /v1/tasks":                               a.submit,
		"POST /v1/tasks/batch":                         a.submitBatch,
		"GET /v1/tasks":                                a.list,
		"GET /v1/tasks/{id}":                           a.get,
		"GET /v1/tasks/{id}/tree":                      a.tree,
		"POST /v1/tasks/{id}/cancel":                   a.cancel,
		"POST /v1/tasks/{id}/steer":                    a.steer,
		"POST /v1/tasks/{id}/follow_up":                a.followUp,
		"POST /v1/tasks/{id}/configure":                a.configure,
		"POST /v1/tasks/{id}/approvals/{call_id}":      a.approve,
		"GET /v1/tasks/{id}/permissions":               a.permissions,
		"POST /v1/tasks/{id}/compact":                  a.compact,
		"GET /v1/tasks/{id}/sessions":                  a.sessions,
		"GET /v1/tasks/{id}/artifacts":                 a.artifacts,
		"GET /v1/tasks/{id}/rounds":                    a.rounds,
		"GET /v1/tasks/{id}/artifacts/{kind}":          a.artifact,
		"GET /v1/tasks/{id}/events":                    a.taskEvents,
		"GET /v1/tasks/{id}/tree/events":               a.treeEvents,
		"GET /v1/tasks/{id}/trace":                     a.traceOf,
		"GET /v1/events":                               a.allEvents,
		"GET /v1/sessions/{id}/turns":                  a.turns,
		"GET /v1/sessions/{id}/tool_outputs/{call_id}": a.toolOutput,
		"GET /v1/counts":                               a.counts,
		"GET /v1/stats":                                a.statsHandler,
		"GET /v1/usage":                                a.usage,
		"GET /v1/reports":                              a.reportsHandler,
		"GET /v1/reports/export":                       a.reportExport,
		"GET /v1/budgets":                              a.listBudgets,
		"GET /v1/budgets/{label}":                      a.getBudget,
		"PUT /v1/budgets/{label}":                      a.putBudget,
		"DELETE /v1/budgets/{label}":                   a.deleteBudget,
		"GET /v1/webhooks/deliveries":                  a.webhookDeliveries,
		"GET /v1/whoami":                               a.whoami,
		"POST /v1/tokens":                              a.createToken,
		"GET /v1/tokens":                               a.listTokens,
		"DELETE /v1/tokens/{id}":                       a.revokeToken,
		"GET /v1/audit":                                a.listAudit,
		"POST /v1/tasks/bulk":                          a.bulkTasks,
		"GET /v1/bulk/{id}":                            a.bulkJob,
		"GET /v1/retention":                            a.retention,
		"POST /v1/queues/{queue}/pause":                a.pauseQueue,
		"POST /v1/queues/{queue}/resume":               a.resumeQueue,
		"GET /v1/pauses":                               a.pauses,
		"POST /v1/schedules":                           a.createSchedule,
		"GET /v1/schedules":                            a.listSchedules,
		"GET /v1/schedules/{id}":                       a.getSchedule,
		"DELETE /v1/schedules/{id}":                    a.deleteSchedule,
		"POST /v1/schedules/{id}/pause":                a.pauseSchedule,
		"POST /v1/schedules/{id}/resume":               a.resumeSchedule,
		"/v1/":                                         a.notFound,
	}
}

// service is what the handlers may ask of the dispatcher beyond reading:
// the operations with rules of their own.
//
//nolint:interfacebloat // the API's one view of what the dispatcher does; split, handlers would join it again
type service interface {
	Submit(ctx context.Context, specs []fleet.TaskSpec) ([]Submission, error)
	Cancel(ctx context.Context, id uuid.UUID, reason string) (CancelResult, error)
	Control(ctx context.Context, id uuid.UUID, req queue.ControlRequest) (queue.ControlReply, error)
	Stats(ctx context.Context) (api.Stats, error)
	Decide(ctx context.Context, d approval.Decision) (fleet.PendingApproval, error)
	Reopen(ctx context.Context, t store.Task, message string) (int, error)
	CreateSchedule(ctx context.Context, name, expr string, spec fleet.TaskSpec, paused bool) (store.Schedule, error)
	PauseSchedule(ctx context.Context, s store.Schedule, paused bool) (store.Schedule, error)
	schedules() store.Schedules
	forge(name string) (ForgeConfig, bool)
	forgeAct(ctx context.Context, name string, cfg ForgeConfig, delivery string, in inbound) (string, string, int, error)
}

// reads are the store queries the API serves as they are.
//
//nolint:interfacebloat // one store query per read route; the API serves them as they are
type reads interface {
	GetTask(ctx context.Context, p store.GetTaskParams) (store.Task, error)
	GetSession(ctx context.Context, p store.GetSessionParams) (store.Session, error)
	ListTasks(ctx context.Context, p store.ListTasksParams) (store.TaskPage, error)
	TaskTree(ctx context.Context, p store.TaskTreeParams) ([]store.Task, error)
	CountTasks(ctx context.Context, p store.CountTasksParams) (map[store.TaskState]int64, error)
	ListSessions(ctx context.Context, p store.ListSessionsParams) ([]store.Session, error)
	LoadTurns(ctx context.Context, p store.LoadTurnsParams) ([]store.Turn, error)
	GetToolOutput(ctx context.Context, p store.GetToolOutputParams) (store.ToolOutput, error)
	ListArtifacts(ctx context.Context, p store.ListArtifactsParams) ([]store.Artifact, error)
	GetArtifact(ctx context.Context, p store.GetArtifactParams) (store.Artifact, error)
	Ping(ctx context.Context) error
}

// events are the reads of the EVENTS stream behind the event streams.
type events interface {
	SubscribeEvents(ctx context.Context, f queue.EventFilter, from queue.StartPosition) (*queue.EventSubscription, error)
	LastEvent(ctx context.Context, rootTaskID, taskID string) (queue.ReceivedEvent, bool, error)
}

// handlers serve the API through narrow views of the dispatcher: what it
// does (svc), what the store holds (reads) and the events (events). They
// keep no state of their own beyond their options and metrics.
type handlers struct {
	svc     service
	econ    economics
	reads   reads
	events  events
	metrics *httpMetrics
	log     *slog.Logger
	opts    APIOptions
	// webhooks is the webhook delivery log; nil without webhooks.
	webhooks *webhook.Notifier
	guard    *requestGuard
	tickets  *tickets
	health   *storegate.Health // told of each store outage a request meets
	// principals holds the API tokens and the audit log.
	principals store.Principals
	// bulk runs bulk actions; sweep is retention (http_bulk.go).
	bulk  bulker
	sweep retentionViewer
	// reports reads the backlog reports (http_reports.go).
	reports reporter
}

func newHandlers(d *Dispatcher, opts APIOptions) *handlers {
	return &handlers{svc: d, econ: d, reads: d.store, events: d.queue, metrics: &d.metrics.http, log: d.log, opts: opts, webhooks: d.webhooks,
		guard: newRequestGuard(opts), tickets: newTickets(opts.Token, opts.TicketTTL), health: d.health, principals: d.store,
		bulk: d, sweep: d.sweep, reports: d.store}
}

// statusRecorder remembers the status code for the latency metric. It
// forwards Flush (event streams) and Unwrap (http.ResponseController).
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// instrument observes the latency of every request by route pattern.
func (a *handlers) instrument(root http.Handler, v1 *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		root.ServeHTTP(rec, r)
		route := r.Pattern
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			_, route = v1.Handler(r)
		}
		if route == "" {
			route = "unmatched"
		}
		code := rec.code
		if code == 0 {
			code = http.StatusOK
		}
		a.metrics.latency.WithLabelValues(r.Method, route, strconv.Itoa(code)).Observe(time.Since(start).Seconds())
	})
}

// streamRoutes are the event streams, which accept ?ticket= instead of
// the bearer token.
var streamRoutes = map[string]bool{
	"GET /v1/tasks/{id}/events": true, "GET /v1/tasks/{id}/tree/events": true, "GET /v1/events": true,
}

// bearer returns the token of the request's Authorization header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, tok, ok := strings.Cut(h, " ")
	return strings.TrimSpace(tok), ok && strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(tok) != ""
}

// refuseURLToken refuses a request carrying ?access_token=, authenticated
// or not: a token in a URL lands in proxy and browser logs.
func refuseURLToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("access_token") {
			writeErr(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalid, Field: "access_token",
				Message: "a token in the URL is not accepted (URLs land in logs): send 'Authorization: Bearer <token>', " +
					"or for an event stream POST /v1/stream-tickets and pass ?ticket=<ticket>; and replace the token, it has been exposed"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (a *handlers) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if err := a.opts.Ready(ctx); err != nil {
		writeErr(w, http.StatusServiceUnavailable, api.ErrorDetail{Code: api.CodeUnavailable, Message: "not ready: " + err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func (a *handlers) notFound(w http.ResponseWriter, r *http.Request) {
	writeErr(w, http.StatusNotFound, api.ErrorDetail{Code: api.CodeNotFound, Message: "no such endpoint: " + r.Method + " " + r.URL.Path + " (see docs/api.md)"})
}

// writeJSON writes v with the status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v) // the client may have gone; nothing to do then
}

func writeErr(w http.ResponseWriter, code int, e api.ErrorDetail) {
	writeJSON(w, code, api.ErrorBody{Error: e})
}
