package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet/worker/internal/spawn"
	"github.com/agentfleet/agentfleet/queue"
)

// control answers a control request for the run's session (subject
// <prefix>.control.<tenant>.<task-id>). It hands the request to the session and
// returns; abort returns before the session has stopped.
func (r *run) control(ctx context.Context, req queue.ControlRequest) queue.ControlReply {
	sess := r.session()
	if sess == nil {
		return queue.ControlReply{Error: "the session is starting; retry"}
	}
	var err error
	switch req.Op {
	case queue.OpSteer:
		err = r.steer(ctx, sess, req.Message)
	case queue.OpFollowUp:
		err = sess.FollowUp(req.Message)
	case queue.OpAbort:
		r.abort(stopAborted)
	case queue.OpConfigure:
		err = r.configure(sess, req)
	case queue.OpStatus:
	case queue.OpCompact:
		sess.RequestCompaction()
	}
	if err != nil {
		return queue.ControlReply{Error: err.Error(), Status: r.status(sess)}
	}
	return queue.ControlReply{OK: true, Status: r.status(sess)}
}

// steer hands a message to the session: as steering while it processes an
// input or before its first one; once it has answered, its run is ending
// and the message would be lost, so a child task stores it (its run's end
// then reopens it, see reopenForLateInput) and a root task refuses it.
func (r *run) steer(ctx context.Context, sess *agent.Session, message string) error {
	if ok, err := sess.SteerWhileBusy(message); ok || err != nil {
		return err
	}
	if !answered(sess.History()) {
		return sess.Steer(message) // taken by the next model call
	}
	if r.task.ParentID == uuid.Nil {
		return errors.New("the session has given its final answer and its task is ending; submit the message as a new task")
	}
	_, err := spawn.StoreInput(ctx, r.w.st, r.task.ID, message)
	return err
}

// configure changes the session's reasoning effort, model and default
// command timeout, within what the worker and the session allow.
func (r *run) configure(sess *agent.Session, req queue.ControlRequest) error {
	if req.Model != "" && len(r.w.cfg.AllowedModels) > 0 && !slices.Contains(r.w.cfg.AllowedModels, req.Model) {
		return errModelNotAllowed(req.Model, r.w.cfg.AllowedModels)
	}
	if req.ReasoningEffort != "" {
		if err := sess.SetReasoningEffort(req.ReasoningEffort); err != nil {
			return err
		}
	}
	if req.CommandTimeout != 0 {
		if err := sess.SetCommandTimeout(req.CommandTimeout); err != nil {
			return err
		}
	}
	if req.Model != "" {
		sess.SetModel(req.Model)
	}
	return nil
}

func (r *run) status(sess *agent.Session) *queue.SessionStatus {
	turns := 0
	for _, t := range sess.History() {
		if t.Kind == agent.TurnAssistant {
			turns++
		}
	}
	return &queue.SessionStatus{SessionID: sess.ID(), TaskID: r.task.ID.String(), State: string(sess.State()),
		Model: sess.Model(), ReasoningEffort: sess.ReasoningEffort(), Turns: turns, WorkerID: r.w.cfg.ID,
		CommandTimeoutMs: sess.CommandTimeout().Milliseconds()}
}

func errModelNotAllowed(model string, allowed []string) error {
	return fmt.Errorf("model %q is not allowed on this worker (allowed: %s)", model, strings.Join(allowed, ", "))
}
