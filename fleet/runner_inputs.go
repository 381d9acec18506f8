package fleet

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// Inputs for a session that is not running (send_input to a queued or
// parked child, or a follow-up sent while no worker runs the session) are
// stored as artifacts of kind "input" named by a UUIDv7, so names sort by
// time. The session's config remembers the last one delivered; a run
// delivers the newer ones as steering before it continues. A crash between
// steering and remembering delivers an input twice (at least once).
const inputArtifact = "input"

// sessionState is the worker's own record in store.Session.Config.
type sessionState struct {
	LastInput string `json:"last_input,omitempty"`
}

// storeInput queues message for task.
func storeInput(ctx context.Context, st store.Store, task uuid.UUID, message string) error {
	name, err := uuid.NewV7()
	if err != nil {
		return err
	}
	_, err = st.PutArtifact(ctx, store.PutArtifactParams{TaskID: task, Kind: inputArtifact, Name: name.String(),
		ContentType: "text/plain; charset=utf-8", Content: []byte(message)})
	return err
}

// StoreInput queues a message for a task whose session is not running now;
// it is delivered (as steering) when the session next runs. The dispatcher
// uses it for follow-ups to sessions that no worker serves.
func StoreInput(ctx context.Context, st store.Store, task uuid.UUID, message string) error {
	return storeInput(ctx, st, task, message)
}

// deliverInputs steers the session with stored inputs it has not seen yet.
// The session row read by prepare is current: only the task's own run
// writes its config, and this run owns the task.
func (r *run) deliverInputs(ctx context.Context) error {
	arts, err := r.w.st.ListArtifacts(ctx, store.ListArtifactsParams{TaskID: r.task.ID})
	if err != nil {
		return err
	}
	var state sessionState
	_ = json.Unmarshal(r.row.Config, &state)
	last := state.LastInput
	for _, a := range arts {
		if a.Kind != inputArtifact || strings.Compare(a.Name, state.LastInput) <= 0 {
			continue
		}
		full, err := r.w.st.GetArtifact(ctx, store.GetArtifactParams{TaskID: r.task.ID, Kind: a.Kind, Name: a.Name})
		if err != nil {
			return err
		}
		if err := r.sess.Steer(string(full.Content)); err != nil {
			return err
		}
		last = max(last, a.Name)
	}
	if last == state.LastInput {
		return nil
	}
	state.LastInput = last
	body, _ := json.Marshal(state)
	r.row, err = r.w.st.UpdateSession(ctx, store.UpdateSessionParams{ID: r.task.ID, Config: body})
	return err
}
