package worker

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/checks"
	"github.com/agentfleet/agentfleet/fleet/delivery"
	"github.com/agentfleet/agentfleet/store"
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

// finishAnswered ends a task whose session completed an answer: failed
// with checks_failed when its checks did not pass, failed with
// delivery_failed when its delivery did not complete, else succeeded.
// The delivery runs after the checks passed (or regardless, when the spec
// says so), once the workspace's diff is stored.
func (r *run) finishAnswered(ctx context.Context, out agent.Outcome) settlement {
	passed := r.checks == nil || r.checks.Passed()
	res := r.result(out, passed, "")
	temporary := false
	if d := r.spec.Delivery; d != nil {
		if passed || d.EvenIfChecksFail {
			r.writeDiff(ctx) // before the delivery commits the changes
			res.Delivery, temporary = r.deliver(ctx, res.FinalText)
		} else {
			res.Delivery = &fleet.DeliveryResult{Branch: d.BranchName(r.task.ID), Skipped: "the checks failed"}
		}
	}
	switch {
	case !passed:
		res.Error = r.checks.Failure()
		return r.finish(ctx, store.TaskFailed, fleet.ReasonChecksFailed, res)
	case temporary && int(r.d.NumDelivered) < r.w.q.Config().MaxDeliver:
		// Delivering again is safe (package delivery); the next run checks
		// the answer again and delivers what this one could not.
		r.log.Info("a temporary delivery error; handing the task back", "err", res.Delivery.Error)
		return r.giveBack(ctx, r.w.backoff(r.d.NumDelivered))
	case res.Delivery != nil && res.Delivery.Error != "":
		res.Success, res.Error = false, "delivery: "+res.Delivery.Error
		return r.finish(ctx, store.TaskFailed, fleet.ReasonDelivery, res)
	}
	return r.finish(ctx, store.TaskSucceeded, "", res)
}

// errDelivery marks a delivery this worker can never make (a credentials
// reference it does not hold): the task fails before its session runs.
var errDelivery = errors.New("delivery")

// checkDelivery refuses, before the session spends anything, a delivery
// whose credentials references this worker does not hold, or that is
// outside the scope of its credentials (delivery.CheckScope).
func (r *run) checkDelivery() error {
	if r.spec.Delivery == nil {
		return nil
	}
	if err := delivery.CheckCredentials(*r.spec.Delivery, deliveryCreds{&r.w.cfg}); err != nil {
		return fmt.Errorf("%w: %v", errDelivery, err)
	}
	if err := delivery.CheckScope(*r.spec.Delivery, r.spec.Environment.Repo, r.task.ID, r.w.cfg.Delivery, deliveryCreds{&r.w.cfg}); err != nil {
		return fmt.Errorf("%w: %v", errDelivery, err)
	}
	return nil
}

// deliver commits, pushes and opens the request (package delivery) and
// publishes the result as a DELIVERY event; temporary says another try
// may succeed.
func (r *run) deliver(ctx context.Context, answer string) (_ *fleet.DeliveryResult, temporary bool) {
	var res fleet.DeliveryResult
	if r.ws == nil {
		res = fleet.DeliveryResult{Branch: r.spec.Delivery.BranchName(r.task.ID), Error: "the task has no local workspace to deliver"}
	} else {
		res, temporary = delivery.Deliver(ctx, delivery.Request{Dir: r.ws.dir, TaskID: r.task.ID, Created: r.task.CreatedAt,
			Spec: *r.spec.Delivery, Repo: r.spec.Environment.Repo, Ref: r.spec.Environment.Ref, Answer: answer,
			Checks: r.checks.Report(), Creds: deliveryCreds{&r.w.cfg}, Config: r.w.cfg.Delivery, Store: r.w.st,
			AllowPrivate: r.w.cfg.allowPrivate()})
	}
	if res.Error != "" {
		r.log.Warn("delivering the task's changes", "err", res.Error)
	}
	r.pump.PublishValue(ctx, fleet.KindDelivery, res)
	return &res, temporary
}

// deliveryCreds resolves a delivery's credentials references from the
// worker's configuration (ssh_keys, delivery.tokens).
type deliveryCreds struct{ cfg *Config }

func (c deliveryCreds) SSHKey(ref string) (delivery.SSHKey, bool) {
	k, ok := c.cfg.SSHKeys[ref]
	kh := k.KnownHostsFile
	if kh == "" {
		kh = c.cfg.KnownHostsFile
	}
	return delivery.SSHKey{KeyFile: k.KeyFile, KnownHostsFile: kh, Scope: k.DeliveryScope}, ok
}

func (c deliveryCreds) Token(ref string) (delivery.Token, bool) {
	t, ok := c.cfg.Delivery.Tokens[ref]
	return t, ok
}
