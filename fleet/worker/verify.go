package worker

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/checks"
	"github.com/agentfleet/agentfleet/store"
)

// KindCheckEnd is the event published after each check run; its data is
// a fleet.CheckRun.
const KindCheckEnd = "CHECK_END"

// newChecks returns the check runner of a task whose spec lists checks
// (package checks), nil for the others.
func (r *run) newChecks() *checks.Runner {
	if len(r.spec.Checks) == 0 {
		return nil
	}
	return &checks.Runner{Env: r.env, Store: r.w.st, TaskID: r.task.ID, Spec: r.spec.Verification, Log: r.log,
		Stopped: func() bool { return r.stopReason() != "" },
		OnRun:   func(run fleet.CheckRun) { r.pump.publishValue(context.Background(), KindCheckEnd, run) }}
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

// finishAnswered ends a task whose session completed an answer: failed
// with checks_failed when its checks did not pass, else succeeded.
func (r *run) finishAnswered(ctx context.Context, out agent.Outcome) settlement {
	if r.checks != nil && !r.checks.Passed() {
		return r.finish(ctx, store.TaskFailed, fleet.ReasonChecksFailed, r.result(out, false, r.checksFailure()))
	}
	return r.finish(ctx, store.TaskSucceeded, "", r.result(out, true, ""))
}

// checksFailure names the checks that failed on the last answer.
func (r *run) checksFailure() string {
	rep := r.checks.Report()
	failed := map[string]bool{}
	last := -1
	for _, run := range rep.Runs {
		if run.Phase == fleet.CheckAfter {
			last = max(last, run.Round)
		}
	}
	var names []string
	for _, run := range rep.Runs {
		if run.Phase == fleet.CheckAfter && run.Round == last && !run.Passed && !failed[run.Name] {
			failed[run.Name] = true
			names = append(names, run.Name)
		}
	}
	b, _ := json.Marshal(names)
	return fmt.Sprintf("checks still failing after %d repair rounds: %s", rep.RepairRounds, b)
}
