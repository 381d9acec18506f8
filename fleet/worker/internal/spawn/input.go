package spawn

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// InputKind is the artifact kind of stored inputs (taskops.InputKind).
const InputKind = taskops.InputKind

// StoreInput stores message as an input of task and returns the input's
// name (taskops.StoreInput).
func StoreInput(ctx context.Context, st store.Store, task uuid.UUID, message string) (string, error) {
	return taskops.StoreInput(ctx, st, task, message)
}

// SendInput steers a running child over its control subject. A child that
// is queued or parked gets the input stored and delivered when it runs
// again. A child that succeeded or failed is reopened (Fleet.Reopen): the
// input is stored, the task goes back to queued and a message sends it to
// a worker, which runs the input as a new round of the child's
// conversation. A cancelled child takes no input.
func (s *Spawner) SendInput(ctx context.Context, agentID, message string) error {
	t, err := s.child(ctx, agentID)
	if err != nil {
		return err
	}
	switch t.State {
	case store.TaskCancelled:
		return cancelledChild(agentID)
	case store.TaskSucceeded, store.TaskFailed: // reopening makes it live again
		if err := s.checkLive(ctx, "give input to ended subagent "+agentID); err != nil {
			return err
		}
	}
	if t.State == store.TaskRunning {
		_, err := s.f.Queue.Control(ctx, fleet.SessionTenant(t), fleet.SessionSubject(t.ID), queue.ControlRequest{Op: queue.OpSteer, Message: message})
		if err == nil {
			return nil
		}
		if !errors.Is(err, queue.ErrNotRunning) {
			return err
		}
	}
	name, err := StoreInput(ctx, s.f.Store, t.ID, message)
	if err != nil {
		return fmt.Errorf("storing the input for subagent %s: %w", agentID, err)
	}
	if t.State == store.TaskRunning {
		// Its session no longer serves control requests: the run is
		// ending or handing the task back. Look again, so an end that
		// came meanwhile reopens it.
		if t, err = s.child(ctx, agentID); err != nil {
			return err
		}
	}
	switch t.State {
	case store.TaskSucceeded, store.TaskFailed:
		if err := s.restoreWorktree(ctx, t); err != nil {
			return fmt.Errorf("subagent %s has the input stored but was not reopened: %w; call send_input again to retry", agentID, err)
		}
		return s.f.Reopen(ctx, t, name)
	case store.TaskCancelled:
		return cancelledChild(agentID)
	case store.TaskQueued:
		if !t.StartedAt.IsZero() {
			// Reopened or handed back: it ran before, so its message may be
			// the one a failed publish lost. Another delivery message is
			// harmless (the claim is a compare-and-set) and makes a retried
			// send_input recover.
			return s.f.sendInput(ctx, t, name)
		}
	}
	return nil
}

func cancelledChild(agentID string) error {
	return fmt.Errorf("subagent %s was cancelled and cannot take input; spawn a new subagent and give it the context it needs", agentID)
}

// Reopen moves an ended child t back to queued (compare-and-set from the
// state read; a lost race reads it again) and enqueues the delivery of its
// stored input name. A child found active meanwhile needs nothing more: its
// next run delivers the input. A cancelled one refuses it.
func (f Fleet) Reopen(ctx context.Context, t store.Task, name string) error {
	id := t.ID
	for t.State == store.TaskSucceeded || t.State == store.TaskFailed {
		_, err := f.Store.TransitionTask(ctx, store.TransitionTaskParams{ID: id, From: t.State, To: store.TaskQueued})
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrConflict) {
			return fmt.Errorf("reopening subagent %s: %w", id, err)
		}
		if t, err = f.Store.GetTask(ctx, store.GetTaskParams{ID: id}); err != nil {
			return fmt.Errorf("reopening subagent %s: %w", id, err)
		}
		switch t.State {
		case store.TaskCancelled:
			return cancelledChild(id.String())
		case store.TaskSucceeded, store.TaskFailed:
		default:
			return nil // reopened by another sender: a run to come delivers the input
		}
	}
	return f.sendInput(ctx, t, name)
}

// sendInput enqueues the message that runs a reopened task to deliver its
// stored input name. A failure leaves the task queued with its input
// stored, and says how to recover: a later send_input sends a message again.
func (f Fleet) sendInput(ctx context.Context, t store.Task, name string) error {
	id := t.ID
	spec, err := fleet.DecodeSpec(t.Spec)
	if err != nil {
		return fmt.Errorf("reopening subagent %s: %w", id, err)
	}
	o := taskops.InputMessage(t, spec, name)
	if _, err := f.Queue.Send(ctx, o.To, o.Msg, o.MsgID); err != nil {
		return fmt.Errorf("subagent %s has the input stored and is queued, but the message that runs it was not sent (%w); call send_input again (a short note will do) to send it", id, err)
	}
	return nil
}
