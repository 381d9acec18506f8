package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// Body limits.
const (
	maxTaskBody  = 2 << 20   // one spec: the prompt limit plus room
	maxBatchBody = 256 << 20 // a batch of up to MaxBatch specs
	maxSmallBody = 1 << 20   // control and cancel bodies
)

func (a *api) submit(w http.ResponseWriter, r *http.Request) {
	var spec TaskSpec
	if !decodeBody(w, r, maxTaskBody, "spec", &spec) {
		a.d.metrics.submitted.WithLabelValues("invalid").Inc()
		return
	}
	subs, err := a.d.Submit(r.Context(), []TaskSpec{spec})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	code := http.StatusCreated
	if subs[0].Existing {
		code = http.StatusOK
	}
	w.Header().Set("Location", "/v1/tasks/"+subs[0].Task.ID.String())
	writeJSON(w, code, SubmitResponse{Task: NewTaskView(subs[0].Task), Existing: subs[0].Existing})
}

func (a *api) submitBatch(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Tasks []json.RawMessage `json:"tasks"`
	}
	if !decodeBody(w, r, maxBatchBody, "body", &body) {
		return
	}
	if len(body.Tasks) > MaxBatch {
		badRequest(w, "tasks", "has %d tasks, at most %d are accepted in one batch; split it", len(body.Tasks), MaxBatch)
		return
	}
	specs := make([]TaskSpec, len(body.Tasks))
	for i, raw := range body.Tasks {
		if field, reason, ok := decodeSpec(raw, &specs[i]); !ok {
			a.d.metrics.submitted.WithLabelValues("invalid").Inc()
			path := fmt.Sprintf("tasks[%d]", i)
			if field != "" {
				path += "." + field
			}
			idx := i
			writeErr(w, http.StatusBadRequest, APIErrorDetail{Code: CodeInvalid, Field: path, Index: &idx, Message: path + " " + reason})
			return
		}
	}
	subs, err := a.submitSpecs(r, specs)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	resp := BatchResponse{Tasks: make([]SubmittedTask, len(subs))}
	for i, s := range subs {
		resp.Tasks[i] = SubmittedTask{ID: s.Task.ID, State: s.Task.State, Existing: s.Existing, IdempotencyKey: s.Task.IdempotencyKey}
	}
	writeJSON(w, http.StatusCreated, resp)
}

// submitSpecs submits a batch; a batch of one keeps the "tasks[0]" field
// prefix in errors.
func (a *api) submitSpecs(r *http.Request, specs []TaskSpec) ([]Submission, error) {
	subs, err := a.d.Submit(r.Context(), specs)
	if be, ok := err.(*BatchError); ok && len(specs) == 1 && be.Index == 0 {
		be.Err = be.Err.WithPrefix("tasks[0]")
	}
	return subs, err
}

// decodeSpec strictly decodes one spec of a batch.
func decodeSpec(raw json.RawMessage, spec *TaskSpec) (field, reason string, ok bool) {
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
		badRequest(w, "id", "%q is not a task id (a UUID)", r.PathValue("id"))
		return uuid.Nil, false
	}
	return id, true
}

// loadTask parses the {id} path value and loads that task, writing the 400,
// 404 or 500 itself when it cannot.
func (a *api) loadTask(w http.ResponseWriter, r *http.Request) (store.Task, bool) {
	id, ok := taskID(w, r)
	if !ok {
		return store.Task{}, false
	}
	t, err := a.d.store.GetTask(r.Context(), store.GetTaskParams{ID: id})
	if err != nil {
		a.fail(w, r, err)
		return store.Task{}, false
	}
	return t, true
}

func (a *api) get(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, NewTaskView(t))
}

func (a *api) list(w http.ResponseWriter, r *http.Request) {
	p, field, reason := listParams(r)
	if field != "" {
		badRequest(w, field, "%s", reason)
		return
	}
	page, err := a.d.store.ListTasks(r.Context(), p)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	resp := TaskList{Tasks: make([]TaskView, len(page.Tasks)), NextCursor: page.NextCursor}
	for i, t := range page.Tasks {
		resp.Tasks[i] = NewTaskView(t)
	}
	writeJSON(w, http.StatusOK, resp)
}

// listParams reads the filters of GET /v1/tasks. A bad one returns the
// query parameter's name and the reason.
func listParams(r *http.Request) (p store.ListTasksParams, field, reason string) {
	q := r.URL.Query()
	for _, v := range q["state"] {
		for _, s := range strings.Split(v, ",") {
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

func (a *api) tree(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	tasks, err := a.d.store.TaskTree(r.Context(), store.TaskTreeParams{RootID: t.RootID})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	resp := TaskTree{RootID: t.RootID, Tasks: make([]TaskView, len(tasks))}
	for i, t := range tasks {
		resp.Tasks[i] = NewTaskView(t)
	}
	writeJSON(w, http.StatusOK, resp)
}

func (a *api) cancel(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(w, r)
	if !ok {
		return
	}
	var req CancelRequest
	if r.ContentLength != 0 && !decodeBody(w, r, maxSmallBody, "body", &req) {
		return
	}
	res, err := a.d.Cancel(r.Context(), id, req.Reason)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	resp := CancelResponse{Cancelled: make([]CancelledView, len(res.Cancelled)), Aborted: res.Aborted}
	for i, c := range res.Cancelled {
		resp.Cancelled[i] = CancelledView{ID: c.ID, From: c.From}
	}
	writeJSON(w, http.StatusOK, resp)
}

func (a *api) counts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	root, ok := optionalUUID(q.Get("root"))
	if !ok {
		badRequest(w, "root", "%q is not a task id", q.Get("root"))
		return
	}
	labels, field, reason := parseLabels(q["label"])
	if field != "" {
		badRequest(w, field, "%s", reason)
		return
	}
	counts, err := a.d.store.CountTasks(r.Context(), store.CountTasksParams{Queue: q.Get("queue"), RootID: root, Labels: labels})
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

func (a *api) statsHandler(w http.ResponseWriter, r *http.Request) {
	st, err := a.d.Stats(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st)
}
