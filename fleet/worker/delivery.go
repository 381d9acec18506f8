package worker

import (
	"context"
	"fmt"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/delivery"
)

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
	if err := delivery.CheckScope(*r.spec.Delivery, r.spec.Environment.Repo, r.task.ID, r.spec.Tenant, r.w.cfg.Delivery, deliveryCreds{&r.w.cfg}); err != nil {
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
		ctx, span := traceDelivery(ctx) // tracing.go
		res, temporary = delivery.Deliver(ctx, delivery.Request{Dir: r.ws.dir, TaskID: r.task.ID, Tenant: r.spec.Tenant, Created: r.task.CreatedAt,
			Spec: *r.spec.Delivery, Repo: r.spec.Environment.Repo, Ref: r.spec.Environment.Ref, Answer: answer,
			Checks: r.checks.Report(), Creds: deliveryCreds{&r.w.cfg}, Config: r.w.cfg.Delivery, Store: r.w.st,
			AllowPrivate: r.w.cfg.allowPrivate()})
		endDelivery(span, res)
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
