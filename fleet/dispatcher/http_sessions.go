package dispatcher

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// maxControlMessage bounds a steer or follow-up message.
const maxControlMessage = 64 << 10

func (a *handlers) steer(w http.ResponseWriter, r *http.Request) { a.message(w, r, queue.OpSteer) }
func (a *handlers) followUp(w http.ResponseWriter, r *http.Request) {
	a.message(w, r, queue.OpFollowUp)
}

func (a *handlers) message(w http.ResponseWriter, r *http.Request, op queue.ControlOp) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	id := t.ID
	var req api.MessageRequest
	if !decodeBody(w, r, maxSmallBody, "body", &req) {
		return
	}
	switch {
	case strings.TrimSpace(req.Message) == "":
		badRequestf(w, "message", "is required: the text to give the session")
		return
	case len(req.Message) > maxControlMessage:
		badRequestf(w, "message", "is %d bytes, more than %d", len(req.Message), maxControlMessage)
		return
	}
	if op == queue.OpFollowUp && (t.State == store.TaskSucceeded || t.State == store.TaskFailed) {
		a.reopen(w, r, t, req.Message) // http_reopen.go
		return
	}
	a.control(w, r, id, queue.ControlRequest{Op: op, Message: req.Message})
}

func (a *handlers) configure(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	id := t.ID
	var req api.ConfigureRequest
	if !decodeBody(w, r, maxSmallBody, "body", &req) {
		return
	}
	switch {
	case req.ReasoningEffort == "" && req.Model == "" && req.CommandTimeout == 0:
		badRequestf(w, "reasoning_effort", "model or command_timeout is required: say what to change")
		return
	case req.CommandTimeout < 0 || (req.CommandTimeout > 0 && req.CommandTimeout < fleet.Duration(time.Second)):
		badRequestf(w, "command_timeout", "must be at least 1s, got %s", time.Duration(req.CommandTimeout))
		return
	case !slices.Contains(fleet.ReasoningEfforts, req.ReasoningEffort):
		badRequestf(w, "reasoning_effort", "%q is unknown, want one of minimal, low, medium, high, xhigh", req.ReasoningEffort)
		return
	case len(req.Model) > fleet.MaxNameBytes:
		badRequestf(w, "model", "is longer than %d bytes", fleet.MaxNameBytes)
		return
	}
	a.control(w, r, id, queue.ControlRequest{Op: queue.OpConfigure, ReasoningEffort: req.ReasoningEffort, Model: req.Model,
		CommandTimeout: time.Duration(req.CommandTimeout)})
}

// compact asks the task's session to compact its context before its next
// model call.
func (a *handlers) compact(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	a.control(w, r, t.ID, queue.ControlRequest{Op: queue.OpCompact})
}

func (a *handlers) control(w http.ResponseWriter, r *http.Request, id uuid.UUID, req queue.ControlRequest) {
	reply, err := a.svc.Control(r.Context(), id, req)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.ControlResponse{OK: reply.OK, Status: reply.Status})
}

func (a *handlers) sessions(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	ss, err := a.reads.ListSessions(r.Context(), store.ListSessionsParams{TaskID: t.ID})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	resp := api.SessionList{Sessions: make([]api.SessionView, len(ss))}
	for i, s := range ss {
		resp.Sessions[i] = api.SessionView{ID: s.ID, TaskID: s.TaskID, Profile: s.Profile, Provider: s.Provider, Model: s.Model,
			State: s.State, LastSeq: s.LastSeq, Usage: s.Usage, CostUSD: s.CostUSD, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	}
	writeJSON(w, http.StatusOK, resp)
}

// sessionID parses the {id} path value of /v1/sessions/{id}/...
func sessionID(w http.ResponseWriter, r *http.Request) (uuid.UUID, bool) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		badRequestf(w, "id", "%q is not a session id (a UUID)", r.PathValue("id"))
		return uuid.Nil, false
	}
	return id, true
}

// Turn pages.
const (
	defaultTurnPage = 500
	maxTurnPage     = 5000
)

func (a *handlers) turns(w http.ResponseWriter, r *http.Request) {
	sess, ok := a.loadSession(w, r)
	if !ok {
		return
	}
	id := sess.ID
	q := r.URL.Query()
	after, limit := int64(0), defaultTurnPage
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			badRequestf(w, "after", "must be a turn seq >= 0, got %q", v)
			return
		}
		after = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxTurnPage {
			badRequestf(w, "limit", "must be a number from 1 to %d, got %q", maxTurnPage, v)
			return
		}
		limit = n
	}
	turns, err := a.reads.LoadTurns(r.Context(), store.LoadTurnsParams{SessionID: id, AfterSeq: after, Limit: limit + 1})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	resp := api.TurnList{Turns: make([]api.TurnView, 0, min(len(turns), limit))}
	for i, t := range turns {
		if i == limit {
			resp.NextAfter = resp.Turns[i-1].Seq
			break
		}
		resp.Turns = append(resp.Turns, api.TurnView{Seq: t.Seq, Kind: t.Kind, Payload: t.Payload, Usage: t.Usage, CreatedAt: t.CreatedAt})
	}
	writeJSON(w, http.StatusOK, resp)
}

func (a *handlers) toolOutput(w http.ResponseWriter, r *http.Request) {
	sess, ok := a.loadSession(w, r)
	if !ok {
		return
	}
	id := sess.ID
	out, err := a.reads.GetToolOutput(r.Context(), store.GetToolOutputParams{SessionID: id, CallID: r.PathValue("call_id")})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.ToolOutputView{SessionID: out.SessionID, CallID: out.CallID, Tool: out.Tool, Output: out.Output,
		IsError: out.IsError, Size: out.Size, CreatedAt: out.CreatedAt})
}

func (a *handlers) artifacts(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	list, err := a.reads.ListArtifacts(r.Context(), store.ListArtifactsParams{TaskID: t.ID})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	resp := api.ArtifactList{Artifacts: make([]api.ArtifactView, len(list))}
	for i, art := range list {
		resp.Artifacts[i] = api.ArtifactView{Kind: art.Kind, Name: art.Name, ContentType: art.ContentType, Size: art.Size, CreatedAt: art.CreatedAt}
	}
	writeJSON(w, http.StatusOK, resp)
}

// artifact serves one artifact's content as is, with its content type;
// ?name= selects among several of one kind.
func (a *handlers) artifact(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	id := t.ID
	art, err := a.reads.GetArtifact(r.Context(), store.GetArtifactParams{TaskID: id, Kind: r.PathValue("kind"), Name: r.URL.Query().Get("name")})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", art.ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(art.Content)))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(art.Content)
}
