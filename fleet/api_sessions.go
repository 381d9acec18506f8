package fleet

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// maxControlMessage bounds a steer or follow-up message.
const maxControlMessage = 64 << 10

func (a *api) steer(w http.ResponseWriter, r *http.Request)    { a.message(w, r, queue.OpSteer) }
func (a *api) followUp(w http.ResponseWriter, r *http.Request) { a.message(w, r, queue.OpFollowUp) }

func (a *api) message(w http.ResponseWriter, r *http.Request, op queue.ControlOp) {
	id, ok := taskID(w, r)
	if !ok {
		return
	}
	var req MessageRequest
	if !decodeBody(w, r, maxSmallBody, "body", &req) {
		return
	}
	switch {
	case strings.TrimSpace(req.Message) == "":
		badRequest(w, "message", "is required: the text to give the session")
		return
	case len(req.Message) > maxControlMessage:
		badRequest(w, "message", "is %d bytes, more than %d", len(req.Message), maxControlMessage)
		return
	}
	a.control(w, r, id, queue.ControlRequest{Op: op, Message: req.Message})
}

func (a *api) configure(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(w, r)
	if !ok {
		return
	}
	var req ConfigureRequest
	if !decodeBody(w, r, maxSmallBody, "body", &req) {
		return
	}
	switch {
	case req.ReasoningEffort == "" && req.Model == "":
		badRequest(w, "reasoning_effort", "or model is required: say what to change")
		return
	case !slices.Contains(validEfforts, req.ReasoningEffort):
		badRequest(w, "reasoning_effort", "%q is unknown, want one of minimal, low, medium, high, xhigh", req.ReasoningEffort)
		return
	case len(req.Model) > maxNameBytes:
		badRequest(w, "model", "is longer than %d bytes", maxNameBytes)
		return
	}
	a.control(w, r, id, queue.ControlRequest{Op: queue.OpConfigure, ReasoningEffort: req.ReasoningEffort, Model: req.Model})
}

func (a *api) control(w http.ResponseWriter, r *http.Request, id uuid.UUID, req queue.ControlRequest) {
	reply, err := a.d.Control(r.Context(), id, req)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ControlResponse{OK: reply.OK, Status: reply.Status})
}

func (a *api) sessions(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	ss, err := a.d.store.ListSessions(r.Context(), store.ListSessionsParams{TaskID: t.ID})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	resp := SessionList{Sessions: make([]SessionView, len(ss))}
	for i, s := range ss {
		resp.Sessions[i] = SessionView{ID: s.ID, TaskID: s.TaskID, Profile: s.Profile, Provider: s.Provider, Model: s.Model,
			State: s.State, LastSeq: s.LastSeq, Usage: s.Usage, CostUSD: s.CostUSD, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
	}
	writeJSON(w, http.StatusOK, resp)
}

// sessionID parses the {id} path value of /v1/sessions/{id}/...
func sessionID(w http.ResponseWriter, r *http.Request) (uuid.UUID, bool) {
	id, err := uuid.Parse(r.PathValue("id"))
	if err != nil {
		badRequest(w, "id", "%q is not a session id (a UUID)", r.PathValue("id"))
		return uuid.Nil, false
	}
	return id, true
}

// Turn pages.
const (
	defaultTurnPage = 500
	maxTurnPage     = 5000
)

func (a *api) turns(w http.ResponseWriter, r *http.Request) {
	id, ok := sessionID(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	after, limit := int64(0), defaultTurnPage
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			badRequest(w, "after", "must be a turn seq >= 0, got %q", v)
			return
		}
		after = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxTurnPage {
			badRequest(w, "limit", "must be a number from 1 to %d, got %q", maxTurnPage, v)
			return
		}
		limit = n
	}
	turns, err := a.d.store.LoadTurns(r.Context(), store.LoadTurnsParams{SessionID: id, AfterSeq: after, Limit: limit + 1})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	resp := TurnList{Turns: make([]TurnView, 0, min(len(turns), limit))}
	for i, t := range turns {
		if i == limit {
			resp.NextAfter = resp.Turns[i-1].Seq
			break
		}
		resp.Turns = append(resp.Turns, TurnView{Seq: t.Seq, Kind: t.Kind, Payload: t.Payload, Usage: t.Usage, CreatedAt: t.CreatedAt})
	}
	writeJSON(w, http.StatusOK, resp)
}

func (a *api) toolOutput(w http.ResponseWriter, r *http.Request) {
	id, ok := sessionID(w, r)
	if !ok {
		return
	}
	out, err := a.d.store.GetToolOutput(r.Context(), store.GetToolOutputParams{SessionID: id, CallID: r.PathValue("call_id")})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, ToolOutputView{SessionID: out.SessionID, CallID: out.CallID, Tool: out.Tool, Output: out.Output,
		IsError: out.IsError, Size: out.Size, CreatedAt: out.CreatedAt})
}

func (a *api) artifacts(w http.ResponseWriter, r *http.Request) {
	t, ok := a.loadTask(w, r)
	if !ok {
		return
	}
	list, err := a.d.store.ListArtifacts(r.Context(), store.ListArtifactsParams{TaskID: t.ID})
	if err != nil {
		a.fail(w, r, err)
		return
	}
	resp := ArtifactList{Artifacts: make([]ArtifactView, len(list))}
	for i, art := range list {
		resp.Artifacts[i] = ArtifactView{Kind: art.Kind, Name: art.Name, ContentType: art.ContentType, Size: art.Size, CreatedAt: art.CreatedAt}
	}
	writeJSON(w, http.StatusOK, resp)
}

// artifact serves one artifact's content as is, with its content type;
// ?name= selects among several of one kind.
func (a *api) artifact(w http.ResponseWriter, r *http.Request) {
	id, ok := taskID(w, r)
	if !ok {
		return
	}
	art, err := a.d.store.GetArtifact(r.Context(), store.GetArtifactParams{TaskID: id, Kind: r.PathValue("kind"), Name: r.URL.Query().Get("name")})
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
