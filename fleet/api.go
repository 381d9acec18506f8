package fleet

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// APIOptions configure the HTTP API.
type APIOptions struct {
	// Token is the bearer token every /v1 request must carry
	// ("Authorization: Bearer <token>", or ?access_token=<token> on GET for
	// browsers' EventSource). Empty disables authentication.
	Token string
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
	a := &api{d: d, opts: opts}
	v1 := http.NewServeMux()
	for pattern, h := range a.routes() {
		v1.HandleFunc(pattern, h)
	}
	root := http.NewServeMux()
	root.Handle("/v1/", a.authenticate(v1))
	root.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	root.HandleFunc("GET /readyz", a.ready)
	root.Handle("GET /metrics", promhttp.HandlerFor(d.metrics.Registry, promhttp.HandlerOpts{}))
	return a.instrument(root, v1)
}

// routes maps the /v1 patterns to their handlers (docs/openapi.yaml
// documents each one; a test checks).
func (a *api) routes() map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{
		"POST /v1/tasks":                               a.submit,
		"POST /v1/tasks/batch":                         a.submitBatch,
		"GET /v1/tasks":                                a.list,
		"GET /v1/tasks/{id}":                           a.get,
		"GET /v1/tasks/{id}/tree":                      a.tree,
		"POST /v1/tasks/{id}/cancel":                   a.cancel,
		"POST /v1/tasks/{id}/steer":                    a.steer,
		"POST /v1/tasks/{id}/follow_up":                a.followUp,
		"POST /v1/tasks/{id}/configure":                a.configure,
		"GET /v1/tasks/{id}/sessions":                  a.sessions,
		"GET /v1/tasks/{id}/artifacts":                 a.artifacts,
		"GET /v1/tasks/{id}/artifacts/{kind}":          a.artifact,
		"GET /v1/tasks/{id}/events":                    a.taskEvents,
		"GET /v1/tasks/{id}/tree/events":               a.treeEvents,
		"GET /v1/events":                               a.allEvents,
		"GET /v1/sessions/{id}/turns":                  a.turns,
		"GET /v1/sessions/{id}/tool_outputs/{call_id}": a.toolOutput,
		"GET /v1/counts":                               a.counts,
		"GET /v1/stats":                                a.statsHandler,
		"/v1/":                                         a.notFound,
	}
}

// api holds the handlers; it has no state of its own beyond its options.
type api struct {
	d    *Dispatcher
	opts APIOptions
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
func (a *api) instrument(root, v1 *http.ServeMux) http.Handler {
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
		a.d.metrics.apiLatency.WithLabelValues(r.Method, route, strconv.Itoa(code)).Observe(time.Since(start).Seconds())
	})
}

// authenticate checks the bearer token: 401 when none is given, 403 when
// it is wrong.
func (a *api) authenticate(next http.Handler) http.Handler {
	if a.opts.Token == "" {
		return next
	}
	want := []byte(a.opts.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := bearer(r)
		switch {
		case !ok:
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentfleet"`)
			writeErr(w, http.StatusUnauthorized, APIErrorDetail{Code: CodeUnauthorized,
				Message: "missing bearer token: send the header 'Authorization: Bearer <token>' (the client reads --token or AGENTFLEET_TOKEN)"})
		case subtle.ConstantTimeCompare([]byte(got), want) != 1:
			writeErr(w, http.StatusForbidden, APIErrorDetail{Code: CodeForbidden, Message: "the bearer token is not valid for this dispatcher"})
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// bearer returns the request's token: the Authorization header, or the
// access_token query parameter of a GET (EventSource cannot set headers).
func bearer(r *http.Request) (string, bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, tok, ok := strings.Cut(h, " ")
		return strings.TrimSpace(tok), ok && strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(tok) != ""
	}
	if r.Method == http.MethodGet {
		if tok := r.URL.Query().Get("access_token"); tok != "" {
			return tok, true
		}
	}
	return "", false
}

func (a *api) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	if err := a.opts.Ready(ctx); err != nil {
		writeErr(w, http.StatusServiceUnavailable, APIErrorDetail{Code: CodeUnavailable, Message: "not ready: " + err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

func (a *api) notFound(w http.ResponseWriter, r *http.Request) {
	writeErr(w, http.StatusNotFound, APIErrorDetail{Code: CodeNotFound, Message: "no such endpoint: " + r.Method + " " + r.URL.Path + " (see docs/api.md)"})
}

// writeJSON writes v with the status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	_ = enc.Encode(v) // the client may have gone; nothing to do then
}

func writeErr(w http.ResponseWriter, code int, e APIErrorDetail) {
	writeJSON(w, code, ErrorBody{Error: e})
}
