package taskops

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// failAttempts bounds the compare-and-set loop of FailFromAnyState against
// a task that keeps changing state under it.
const failAttempts = 5

// FailFromAnyState moves task id from whatever active state it is in to
// failed, with reason as the task's error and detail as its result's
// error. It returns the task in its final state and reports whether this
// call failed it: false, with a nil error, when the task was already final.
// A task that does not exist is store.ErrNotFound.
func FailFromAnyState(ctx context.Context, st store.Store, id uuid.UUID, reason, detail string) (store.Task, bool, error) {
	result, err := json.Marshal(fleet.TaskResult{Success: false, Error: detail})
	if err != nil {
		return store.Task{}, false, err
	}
	for range failAttempts {
		t, err := st.GetTask(ctx, store.GetTaskParams{ID: id})
		if err != nil {
			return store.Task{}, false, err
		}
		if t.State.Terminal() {
			return t, false, nil
		}
		t, err = st.TransitionTask(ctx, store.TransitionTaskParams{ID: id, From: t.State, To: store.TaskFailed,
			Error: reason, Result: result})
		if err == nil {
			return t, true, nil
		}
		if !errors.Is(err, store.ErrConflict) {
			return store.Task{}, false, err
		}
	}
	return store.Task{}, false, fmt.Errorf("task %s keeps changing state; could not mark it failed", id)
}
