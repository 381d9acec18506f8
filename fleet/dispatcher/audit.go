package dispatcher

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/internal/identity"
	"github.com/agentfleet/agentfleet/store"
)

// The audit log records every mutating call of the API (the routes of
// routeAccess with an action): who (the principal's ID), in which
// tenant, when, the action, its target (a task id, "task/call", a budget
// label, a token id; the path when the handler named none) and the
// outcome (the status code, and the message of an error). A call refused
// for want of a role is recorded too; one refused for want of a
// credential (401) is not, having no principal. A call that touches
// several tenants (a batch, a token with grants in several) is one entry
// per tenant; one whose tenant was never learnt (a 400 before the task
// was read, a task another tenant owns) has tenant "", which only admins
// of every tenant see. The entry is written after the answer, so a store
// failure then is logged and does not change the answer.
//
// Entries older than their tenant's audit window are deleted every hour
// by Run (audit_retention.go).

// DefaultAuditRetention is how long audit entries are kept by default.
const DefaultAuditRetention = 90 * 24 * time.Hour

// auditNote collects, while a request is served, what its entry says.
type auditNote struct {
	mu      sync.Mutex
	action  string
	target  string
	tenants []string
}

type auditKey struct{}

func noteOf(r *http.Request) *auditNote {
	n, _ := r.Context().Value(auditKey{}).(*auditNote)
	return n
}

// noteAudit adds a tenant (unless "") and sets the target (unless "") of
// the request's audit entry; a no-op on a request not audited.
func noteAudit(r *http.Request, tenant, target string) {
	n := noteOf(r)
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if tenant != "" && !slices.Contains(n.tenants, tenant) {
		n.tenants = append(n.tenants, tenant)
	}
	if target != "" {
		n.target = target
	}
}

// noteAction names the action and target of the request's audit entry
// when the route's own is not precise enough (approve or deny).
func noteAction(r *http.Request, action, target string) {
	n := noteOf(r)
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.action, n.target = action, target
}

// auditRecorder keeps the status code and the start of an error body.
type auditRecorder struct {
	http.ResponseWriter
	code int
	body bytes.Buffer
}

func (r *auditRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *auditRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	if r.code >= 400 && r.body.Len() < 4096 {
		r.body.Write(b[:min(len(b), 4096-r.body.Len())])
	}
	return r.ResponseWriter.Write(b)
}

func (r *auditRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// audit records the mutating calls (see above).
func (a *handlers) audit(next http.Handler, v1 *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, route := v1.Handler(r)
		acc := routeAccess[route]
		if acc.action == "" || a.principals == nil {
			next.ServeHTTP(w, r)
			return
		}
		n := &auditNote{action: acc.action, target: r.URL.Path}
		rec := &auditRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), auditKey{}, n)))
		a.record(r, n, rec)
	})
}

func (a *handlers) record(r *http.Request, n *auditNote, rec *auditRecorder) {
	code := rec.code
	if code == 0 {
		code = http.StatusOK
	}
	var msg string
	if code >= 400 {
		var body api.ErrorBody
		if json.Unmarshal(rec.body.Bytes(), &body) == nil {
			msg = body.Error.Message
		}
		if msg == "" {
			msg = http.StatusText(code)
		}
	}
	n.mu.Lock()
	tenants := slices.Clone(n.tenants)
	action, target := n.action, n.target
	n.mu.Unlock()
	if len(tenants) == 0 {
		tenants = []string{""}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	who := principal(r).ID
	for _, t := range tenants {
		e := store.AuditEntry{Principal: who, Tenant: t, Action: action, Target: target, Status: code, Error: msg}
		if _, err := a.principals.AppendAudit(ctx, e); err != nil {
			a.log.Warn("writing the audit log", "err", err, "principal", who, "action", action, "target", target, "status", code)
		}
	}
}

// listAudit serves GET /v1/audit?tenant=&principal=&action=&since=&until=&limit=&cursor=.
func (a *handlers) listAudit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	p := store.ListAuditParams{Principal: q.Get("principal"), Action: q.Get("action"), Cursor: q.Get("cursor"),
		Tenants: tenantFilter(principal(r), identity.Admin, q.Get("tenant"))}
	for name, dst := range map[string]*time.Time{"since": &p.Since, "until": &p.Until} {
		if v := q.Get(name); v != "" {
			t, err := parseDayOrTime(v)
			if err != nil {
				badRequestf(w, name, "%q is not a date (2025-01-02) or an RFC 3339 time (2025-01-02T15:04:05Z)", v)
				return
			}
			*dst = t
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > store.MaxListLimit {
			badRequestf(w, "limit", "must be a number from 1 to %d, got %q", store.MaxListLimit, v)
			return
		}
		p.Limit = n
	}
	page, err := a.principals.ListAudit(r.Context(), p)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := api.AuditList{Entries: make([]api.AuditEntry, len(page.Entries)), NextCursor: page.NextCursor}
	for i, e := range page.Entries {
		out.Entries[i] = api.AuditEntry{ID: e.ID, At: e.At, Principal: e.Principal, Tenant: e.Tenant, Action: e.Action,
			Target: e.Target, Status: e.Status, Error: e.Error}
	}
	writeJSON(w, http.StatusOK, out)
}
