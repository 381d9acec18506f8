package worker

import (
	"context"
	"errors"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/checks"
)

// newChecks returns the check runner of a task whose spec lists checks
// (package checks), nil for the others.
func (r *run) newChecks(sess *agent.Session) *checks.Runner {
	if len(r.spec.Checks) == 0 {
		return nil
	}
	return &checks.Runner{Env: r.env, Store: r.w.st, TaskID: r.task.ID, Spec: r.spec.Verification, Log: r.log, Redact: r.redact.Redact,
		Stopped: func() bool { return r.stopReason() != "" }, Closed: sess.Done(),
		OnRun: func(run fleet.CheckRun) { r.pump.PublishValue(context.Background(), fleet.KindCheckEnd, run) }}
}

// checkBefore runs the checks before a new session's first input, when
// the spec asks for it.
func (r *run) checkBefore(ctx context.Context) {
	if r.checks != nil && len(r.sess.History()) == 0 {
		r.checks.Before(ctx)
	}
}

// verify runs the checks after a completed answer and the repair rounds
// they call for (checks.Runner.Verify).
func (r *run) verify(ctx context.Context, out agent.Outcome, err error) (agent.Outcome, error) {
	if r.checks == nil || err != nil || r.stopReason() != "" || !checks.Completed(out) {
		return out, err
	}
	return r.checks.Verify(ctx, r.sess, out, checks.CountRepairs(r.sess.History()))
}

// errDelivery marks a delivery this worker can never make (a credentials
// reference it does not hold): the task fails before its session runs.
var errDelivery = errors.New("delivery")
