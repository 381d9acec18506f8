package fleet

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentfleet/agentfleet/queue"
)

// AnyTenant is the key of TenantQueues that applies to every tenant not
// listed by name.
const AnyTenant = "*"

// TenantQueues maps a tenant (or AnyTenant) to the queues its tasks may
// use: an operator's upper bound, so that an operator can run a worker
// pool per tenant (a worker with `queues: [team-a]` and `tenants: [a]`,
// docs/operations.md, "Worker pools per tenant") and no other tenant's
// task lands in it. A spec naming a queue outside its tenant's list is
// refused at submission (a 400 naming spec.queue and the allowed queues);
// a spec naming none takes the first queue of its tenant's list. A tenant
// neither listed nor covered by AnyTenant may use every queue, as may
// every tenant when the map is empty (the default).
type TenantQueues map[string][]string

// Queues returns the queues tenant may use, and whether it is bounded.
func (m TenantQueues) Queues(tenant string) ([]string, bool) {
	if q, ok := m[tenant]; ok {
		return q, true
	}
	q, ok := m[AnyTenant]
	return q, ok
}

// DefaultQueue is the queue of a task of tenant whose spec names none: the
// first queue the tenant may use, DefaultQueue when it is not bounded.
func (m TenantQueues) DefaultQueue(tenant string) string {
	if q, ok := m.Queues(tenant); ok && len(q) > 0 {
		return q[0]
	}
	return DefaultQueue
}

// Validate reports a key that is neither a tenant name nor AnyTenant, and
// a list that is empty or names something that is not a queue, naming the
// configuration key.
func (m TenantQueues) Validate() error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k != AnyTenant && queue.CheckTenant(k) != nil {
			return fmt.Errorf("tenant_queues: key %q must be a tenant name (letters, digits, '-', '_') or %q for every other tenant", k, AnyTenant)
		}
		if len(m[k]) == 0 {
			return fmt.Errorf("tenant_queues.%s must name at least one queue (drop the key to allow every queue)", k)
		}
		for _, q := range m[k] {
			if err := queue.CheckQueueName(q); err != nil {
				return fmt.Errorf("tenant_queues.%s: %w", k, err)
			}
		}
	}
	return nil
}

// check refuses a spec whose queue its tenant may not use. s has its
// defaults (Defaults.Apply): its tenant and queue are set.
func (m TenantQueues) check(s TaskSpec) *FieldError {
	tenant := s.Tenant
	if tenant == "" {
		tenant = DefaultTenant
	}
	allowed, ok := m.Queues(tenant)
	if !ok || slices.Contains(allowed, s.Queue) {
		return nil
	}
	return fieldErr("queue", "%q is not a queue tenant %s may use (the operator's policy.tenant_queues allows %s); name one of those, or none for %s",
		s.Queue, tenant, strings.Join(allowed, ", "), allowed[0])
}
