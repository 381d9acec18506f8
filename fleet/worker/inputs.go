package worker

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/store"
)

// Inputs for a session that is not running (send_input to a queued, parked
// or ended child, a follow-up of an ended task) are stored as artifacts of kind "input" named by a UUIDv7
// (taskops.StoreInput), so names sort by time. The session's config
// remembers the last one delivered. A run delivers the newer ones before
// it goes on: as steering when the session is new or stopped inside an
// input, as new user inputs (the first, then the rest as follow-ups) when
// its history ends with a finished answer, which is how an ended child
// that was reopened answers again. The run remembers them once the session
// returns, so a crash before that delivers an input again (at least once).
const inputArtifact = taskops.InputKind

// sessionState is the worker's own record in store.Session.Config.
type sessionState struct {
	LastInput string `json:"last_input,omitempty"`
}

// pendingInputs are the stored inputs the session has not seen yet, oldest
// first. The session row read by prepare is current: only the task's own
// run writes its config, and this run owns the task.
type pendingInputs struct {
	texts []string
	last  string // name of the newest, "" when there is none
}

// loadInputs reads the stored inputs newer than the last delivered one.
// A root task gets stored inputs only when it is reopened (a follow-up of
// the ended task, reopen.go), so its first run costs no read.
func (r *run) loadInputs(ctx context.Context) (pendingInputs, error) {
	if r.task.ParentID == uuid.Nil && r.task.Attempts <= 1 {
		return pendingInputs{}, nil
	}
	arts, err := r.w.st.ListArtifacts(ctx, store.ListArtifactsParams{TaskID: r.task.ID})
	if err != nil {
		return pendingInputs{}, err
	}
	seen := r.sessionState().LastInput
	var in pendingInputs
	for _, a := range arts {
		if a.Kind != inputArtifact || strings.Compare(a.Name, seen) <= 0 {
			continue
		}
		full, err := r.w.st.GetArtifact(ctx, store.GetArtifactParams{TaskID: r.task.ID, Kind: a.Kind, Name: a.Name})
		if err != nil {
			return pendingInputs{}, err
		}
		in.texts = append(in.texts, string(full.Content))
		in.last = max(in.last, a.Name)
	}
	return in, nil
}

func (r *run) sessionState() sessionState {
	var state sessionState
	_ = json.Unmarshal(r.row.Config, &state)
	return state
}

// runWithInputs hands the inputs to the session and runs it: a new
// session gets its prompt (inputs stored before it ever ran steer it); a
// session whose history ends outside an input takes the inputs as
// new user inputs (a follow-up round: the model answers again); one
// stopped inside an input is steered and continued.
func (r *run) runWithInputs(ctx context.Context, in pendingInputs) (agent.Outcome, error) {
	h := r.sess.History()
	if answered(h) && len(in.texts) > 0 {
		for _, text := range in.texts[1:] {
			if err := r.sess.FollowUp(text); err != nil {
				return agent.Outcome{}, err
			}
		}
		return r.sess.Submit(ctx, in.texts[0])
	}
	for _, text := range in.texts {
		if err := r.sess.Steer(text); err != nil {
			return agent.Outcome{}, err
		}
	}
	if len(h) == 0 {
		return r.sess.Submit(ctx, r.spec.Prompt)
	}
	return r.sess.Continue(ctx)
}

// answered reports whether a history ends outside an input: with a
// finished answer (an assistant turn without tool calls) or a system note.
// That is when agent.Session.Continue has nothing to do.
func answered(h []agent.Turn) bool {
	for len(h) > 0 && h[len(h)-1].Kind == agent.TurnCompaction {
		h = h[:len(h)-1] // a compaction while idle follows the answer
	}
	if len(h) == 0 {
		return false
	}
	last := h[len(h)-1]
	return last.Kind == agent.TurnSystem || last.Kind == agent.TurnAssistant && len(last.ToolCalls) == 0
}

// markDelivered remembers the newest input as delivered. A failure is
// logged: the input is then delivered again by the next run.
func (r *run) markDelivered(ctx context.Context, in pendingInputs) {
	if in.last == "" {
		return
	}
	if r.rec.rowPending() {
		r.flushTurns(ctx) // the session row must exist to be updated
	}
	state := r.sessionState()
	state.LastInput = in.last
	body, _ := json.Marshal(state)
	row, err := r.w.st.UpdateSession(ctx, store.UpdateSessionParams{ID: r.task.ID, Config: body})
	if err != nil {
		r.log.Warn("remembering delivered inputs", "err", err)
		return
	}
	r.row = row
}
