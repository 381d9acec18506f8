package worker

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Worker pools per tenant. A worker whose Config.Tenants names tenants is a
// pool of those tenants: its NATS user may serve only their sessions'
// control subjects (queue.PermissionsFor with the same tenants), so it
// could not be steered, aborted or asked for its status for any other
// tenant's task. Tasks reach a pool through its queues: the dispatcher's
// policy.tenant_queues bounds the queues each tenant may use (fleet.Policy),
// and the pool serves those queues. A pool that claims a task of another
// tenant anyway (a queue shared with other tenants, a policy that lets a
// tenant use the pool's queue) does not run it: the task fails with
// fleet.ReasonTenantNotServed, through the completer, and the worker logs
// the misconfiguration. It is not handed back, which would loop between
// the same pool's workers.

// checkTenants reports tenants entries that are not tenant names.
func (c Config) checkTenants() []error {
	var errs []error
	for _, t := range c.Tenants {
		if err := queue.CheckTenant(t); err != nil {
			errs = append(errs, fmt.Errorf("tenants entry %q must be 1 to 128 letters, digits, '-' or '_'", t))
		}
	}
	return errs
}

// servesTenant reports whether the worker runs tasks of tenant: every
// tenant when Tenants is empty.
func (c Config) servesTenant(tenant string) bool {
	return len(c.Tenants) == 0 || slices.Contains(c.Tenants, tenant)
}

// refuseTenant ends a just-claimed task of a tenant this worker does not
// serve, before anything of it runs; refused is false for a task it
// serves.
func (w *Worker) refuseTenant(ctx context.Context, t store.Task) (s settlement, refused bool) {
	tenant := fleet.SessionTenant(t)
	if w.cfg.servesTenant(tenant) {
		return settlement{}, false
	}
	detail := fmt.Sprintf("worker %s serves tenants %v, not %q (queue %q): a misconfiguration; "+
		"let tenant %s use only queues its pool serves (the dispatcher's policy.tenant_queues) or add it to the pool's tenants",
		w.cfg.ID, w.cfg.Tenants, tenant, t.Queue, tenant)
	w.log.Error("refusing a task of a tenant this worker does not serve", "task_id", t.ID, "tenant", tenant,
		"queue", t.Queue, "tenants", w.cfg.Tenants)
	return w.failTask(ctx, t.ID, fleet.ReasonTenantNotServed, detail), true
}
