package dispatcher

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/internal/identity"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// Body limits.
const (
	maxTaskBody  = 2 << 20   // one spec: the prompt limit plus room
	maxBatchBody = 256 << 20 // a batch of up to api.MaxBatch specs
	maxSmallBody = 1 << 20   // control and cancel bodies
)

func (a *handlers) submit(w http.ResponseWriter, r *http.Request) {
	var spec fleet.TaskSpec
	if !decodeBody(w, r, maxTaskBody, "spec", &spec) {
		a.metrics.invalid.Inc()
		return
	}
	specs := []fleet.TaskSpec{spec}
	if !a.assignTenants(w, r, specs) {
		return
	}
	subs, err := a.svc.Submit(r.Context(), specs)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if !a.ownSubmissions(w, r, subs) {
		return
	}
	noteAudit(r, "", subs[0].Task.ID.String())
	code := http.StatusCreated
	if subs[0].Existing {
		code = http.StatusOK
	}
	w.Header().Set("Location", "/v1/tasks/"+subs[0].Task.ID.String())
	writeJSON(w, code, api.SubmitResponse{Task: api.NewTaskView(subs[0].Task), Existing: subs[0].Existing})
}

func (a *handlers) submitBatch(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Tasks []json.RawMessage `json:"tasks"`
	}
	if !decodeBody(w, r, maxBatchBody, "body", &body) {
		return
	}
	specs := make([]fleet.TaskSpec, len(body.Tasks))
	for i, raw := range body.Tasks {
		if field, reason, ok := decodeSpec(raw, &specs[i]); !ok {
			a.metrics.invalid.Inc()
			path := fmt.Sprintf("tasks[%d]", i)
			if field != "" {
				path += "." + field
			}
			idx := i
			writeErr(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalid, Field: path, Index: &idx, Message: path + " " + reason})
			return
		}
	}
	if !a.assignTenants(w, r, specs) {
		return
	}
	subs, err := a.submitSpecs(r, specs)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if !a.ownSubmissions(w, r, subs) {
		return
	}
	resp := api.BatchResponse{Tasks: make([]api.SubmittedTask, len(subs))}
	for i, s := range subs {
		resp.Tasks[i] = api.SubmittedTask{ID: s.Task.ID, State: s.Task.State, Existing: s.Existing, IdempotencyKey: s.Task.IdempotencyKey}
	}
	writeJSON(w, http.StatusCreated, resp)
}

// submitSpecs submits a batch; a batch of one keeps the "tasks[0]" field
// prefix in errors.
func (a *handlers) submitSpecs(r *http.Request, specs []fleet.TaskSpec) ([]Submission, error) {
	subs, err := a.svc.Submit(r.Context(), specs)
	if be, ok := errors.AsType[*BatchError](err); ok && len(specs) == 1 && be.Index == 0 {
		be.Err = be.Err.WithPrefix("tasks[0]")
	}
	return subs, err
}

// decodeSpec strictly decodes one spec of a batch.
func decodeSpec(raw json.RawMessage, spec *fleet.TaskSpec) (field, reason string, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(spec); err != nil {
		field, reason := jsonErrorField(err)
		return field, reason, false
	}
	return "", "", true
}

// taskID parses the {id} path value, writing a 400 when it is not a UUID.
func taskID(w http.ResponseWriter, r *http.Request) (uuid.UUID, bool) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		badRequestf(w, "id", "%q is not a task id (a UUID)", r.PathValue("id"))
		return uuid.Nil, false
	}
	return id, true
}

func (a *handlers) get(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, withOutcome(r.Context(), a.reads, api.NewTaskView(t)))
}

func (a *handlers) list(w http.ResponseWriter, r *http.Request) {
	p, field, reason := listParams(r)
	if field != "" {
		badRequestf(w, field, "%s", reason)
		return
	}
	p.Tenants = tenantFilter(principal(r), identity.Viewer, r.URL.Query().Get("tenant"))
	page, err := a.reads.ListTasks(r.Context(), p)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	resp := api.TaskList{Tasks: make([]api.TaskView, len(page.Tasks)), NextCursor: page.NextCursor}
	for i, t := range page.Tasks {
		resp.Tasks[i] = api.NewTaskView(t)
	}
	writeJSON(w, http.StatusOK, resp)
}

// listParams reads the filters of GET /v1/tasks. A bad one returns the
// query parameter's name and the reason.
func listParams(r *http.Request) (p store.ListTasksParams, field, reason string) {
	q := r.URL.Query()
	for _, v := range q["state"] {
		for s := range strings.SplitSeq(v, ",") {
			st := store.TaskState(strings.TrimSpace(s))
			if !st.Valid() {
				return p, "state", fmt.Sprintf("%q is not a task state (want one of %v)", s, store.TaskStates)
			}
			p.States = append(p.States, st)
		}
	}
	var ok bool
	if p.RootID, ok = optionalUUID(q.Get("root")); !ok {
		return p, "root", fmt.Sprintf("%q is not a task id", q.Get("root"))
	}
	if p.ParentID, ok = optionalUUID(q.Get("parent")); !ok {
		return p, "parent", fmt.Sprintf("%q is not a task id", q.Get("parent"))
	}
	p.Queue = q.Get("queue")
	labels, field, reason := parseLabels(q["label"])
	if field != "" {
		return p, field, reason
	}
	p.Labels = labels
	for name, dst := range map[string]*time.Time{"created_after": &p.CreatedAfter, "created_before": &p.CreatedBefore} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return p, name, fmt.Sprintf("%q is not an RFC 3339 time such as 2025-01-02T15:04:05Z", v)
			}
			*dst = t
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return p, "limit", fmt.Sprintf("must be a number from 1 to 1000, got %q", v)
		}
		p.Limit = n
	}
	p.Cursor = q.Get("cursor")
	if p.Query = strings.TrimSpace(q.Get("q")); p.Query != "" {
		if len(p.Query) > store.MaxQueryLen {
			return p, "q", fmt.Sprintf("is %d bytes, longer than %d: search with fewer words", len(p.Query), store.MaxQueryLen)
		}
		if _, err := store.ParseQuery(p.Query); err != nil {
			return p, "q", fmt.Sprintf("%q names nothing to find: give a word or a \"phrase\" (-word only excludes)", p.Query)
		}
	}
	return p, "", ""
}

func optionalUUID(s string) (uuid.UUID, bool) {
	if s == "" {
		return uuid.Nil, true
	}
	id, err := uuid.Parse(s)
	return id, err == nil
}

// parseLabels reads label=key=value parameters (also key:value).
func parseLabels(vals []string) (map[string]string, string, string) {
	if len(vals) == 0 {
		return nil, "", ""
	}
	m := make(map[string]string, len(vals))
	for _, v := range vals {
		k, val, ok := strings.Cut(v, "=")
		if !ok {
			k, val, ok = strings.Cut(v, ":")
		}
		if !ok || k == "" {
			return nil, "label", fmt.Sprintf("%q must be key=value", v)
		}
		m[k] = val
	}
	return m, "", ""
}

func (a *handlers) tree(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	tasks, err := a.reads.TaskTree(r.Context(), store.TaskTreeParams{RootID: t.RootID})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	resp := api.TaskTree{RootID: t.RootID, Tasks: make([]api.TaskView, len(tasks))}
	for i, t := range tasks {
		resp.Tasks[i] = api.NewTaskView(t)
	}
	writeJSON(w, http.StatusOK, resp)
}

func (a *handlers) cancel(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	id := t.ID
	var req api.CancelRequest
	if r.ContentLength != 0 && !decodeBody(w, r, maxSmallBody, "body", &req) {
		return
	}
	res, err := a.svc.Cancel(r.Context(), id, req.Reason)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	resp := api.CancelResponse{Cancelled: make([]api.CancelledView, len(res.Cancelled)), Aborted: res.Aborted}
	for i, c := range res.Cancelled {
		resp.Cancelled[i] = api.CancelledView{ID: c.ID, From: c.From}
	}
	writeJSON(w, http.StatusOK, resp)
}

func (a *handlers) counts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	root, ok := optionalUUID(q.Get("root"))
	if !ok {
		badRequestf(w, "root", "%q is not a task id", q.Get("root"))
		return
	}
	labels, field, reason := parseLabels(q["label"])
	if field != "" {
		badRequestf(w, field, "%s", reason)
		return
	}
	counts, err := a.reads.CountTasks(r.Context(), store.CountTasksParams{Queue: q.Get("queue"), RootID: root, Labels: labels,
		Tenants: tenantFilter(principal(r), identity.Viewer, q.Get("tenant"))})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make(map[store.TaskState]int64, len(store.TaskStates))
	for _, s := range store.TaskStates {
		out[s] = counts[s]
	}
	writeJSON(w, http.StatusOK, out)
}

func (a *handlers) statsHandler(w http.ResponseWriter, r *http.Request) {
	st, err := a.svc.Stats(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if tenants := tenantFilter(principal(r), identity.Viewer, ""); tenants != nil {
		// The counts of the principal's tenants only; the queues are the
		// fleet's and say nothing of any task.
		if st.Counts, err = a.reads.CountTasks(r.Context(), store.CountTasksParams{Tenants: tenants}); err != nil {
			a.fail(w, r, err)
			return
		}
	}
	writeJSON(w, http.StatusOK, st)
}
