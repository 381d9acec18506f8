package taskops

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/store"
)

// InputKind is the artifact kind of stored inputs: input for a session
// that is not running (send_input to a queued, parked or ended child, a
// follow-up of an ended task, steering that came as a run ended), named by
// a UUIDv7 so names sort by time. The worker delivers them at the task's
// next run (fleet/worker inputs.go).
const InputKind = "input"

// InputStore is what storing an input needs of the store.
type InputStore interface {
	PutArtifact(ctx context.Context, p store.PutArtifactParams) (store.Artifact, error)
}

// StoreInput stores message as an input of task and returns the input's
// name.
func StoreInput(ctx context.Context, st InputStore, task uuid.UUID, message string) (string, error) {
	name, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	_, err = st.PutArtifact(ctx, store.PutArtifactParams{TaskID: task, Kind: InputKind, Name: name.String(),
		ContentType: "text/plain; charset=utf-8", Content: []byte(message)})
	return name.String(), err
}

// ErrCancelledTask: a cancelled task takes no input; it is final for good.
var ErrCancelledTask = errors.New("taskops: a cancelled task takes no input")

// Reopen moves t, a task that succeeded or failed, back to queued and
// enqueues the message that runs it to answer its stored input name
// (InputMessage): the fenced transition ended -> queued is a
// compare-and-set from the state read, so of two reopeners exactly one
// moves it; a lost race reads the task again. A task found active
// meanwhile needs nothing more (its next run delivers the input) and
// Reopen reports moved false; a cancelled one is ErrCancelledTask. The
// message goes where ReopenMessage says; it is sent also when another reopener moved the task and it is
// still queued, as its message may be the one a failed publish lost (the
// claim is a compare-and-set, a duplicate is harmless).
func (c *Completer) Reopen(ctx context.Context, t store.Task, name string) (moved bool, err error) {
	id, ended := t.ID, t
	for t.State == store.TaskSucceeded || t.State == store.TaskFailed {
		nt, err := c.Store.TransitionTask(ctx, store.TransitionTaskParams{ID: id, From: t.State, To: store.TaskQueued})
		if err == nil {
			t, moved = nt, true
			break
		}
		if !errors.Is(err, store.ErrConflict) {
			return false, fmt.Errorf("reopening task %s: %w", id, err)
		}
		if t, err = c.Store.GetTask(ctx, store.GetTaskParams{ID: id}); err != nil {
			return false, fmt.Errorf("reopening task %s: %w", id, err)
		}
		if t.State.Terminal() {
			ended = t
		}
	}
	switch t.State {
	case store.TaskCancelled:
		return false, fmt.Errorf("%w: task %s", ErrCancelledTask, id)
	case store.TaskQueued:
		if !moved && t.StartedAt.IsZero() {
			return false, nil // never ran: its start message delivers the input
		}
	default:
		return false, nil // running or parked: its run delivers the input
	}
	spec, err := fleet.DecodeSpec(t.Spec)
	if err != nil {
		return moved, fmt.Errorf("reopening task %s: %w", id, err)
	}
	o := ReopenMessage(ended, spec, name)
	if _, err := c.Queue.Send(ctx, o.To, o.Msg, o.MsgID); err != nil {
		return moved, fmt.Errorf("task %s has the input stored and is queued, but the message that runs it was not sent (%w); send the input again to retry", id, err)
	}
	return moved, nil
}
