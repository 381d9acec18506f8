package fleet

import (
	"strings"
	"testing"
)

// tenant_queues bounds the queues of each tenant, gives the queue of a
// spec that names none, and leaves other tenants free.
func TestTenantQueuesBoundAndDefaultTheQueue(t *testing.T) {
	p := Policy{TenantQueues: TenantQueues{"team-a": {"team-a", "team-a-big"}, AnyTenant: {DefaultQueue}}}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	apply := func(tenant, q string) TaskSpec {
		return Defaults{Policy: p}.Apply(TaskSpec{Prompt: "p", Profile: "openai", Tenant: tenant, Queue: q})
	}
	for _, c := range []struct {
		tenant, queue, want, err string
	}{
		{tenant: "team-a", want: "team-a"},
		{tenant: "team-a", queue: "team-a-big", want: "team-a-big"},
		{tenant: "team-a", queue: DefaultQueue, err: `spec.queue "default" is not a queue tenant team-a may use`},
		{tenant: "team-b", want: DefaultQueue},
		{tenant: "team-b", queue: "team-a", err: "allows default"},
		{tenant: "", want: DefaultQueue},
	} {
		s := apply(c.tenant, c.queue)
		err := p.Check(s)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("tenant %q queue %q: %v, want an error containing %q", c.tenant, c.queue, err, c.err)
		case c.err == "" && (err != nil || s.Queue != c.want):
			t.Errorf("tenant %q queue %q: queue %q, %v; want %q", c.tenant, c.queue, s.Queue, err, c.want)
		}
	}
	free := Policy{TenantQueues: TenantQueues{"team-a": {"team-a"}}}
	if err := free.Check(Defaults{Policy: free}.Apply(TaskSpec{Prompt: "p", Profile: "openai", Tenant: "team-b", Queue: "team-a"})); err != nil {
		t.Errorf("a tenant not listed and no %q: %v, want every queue allowed", AnyTenant, err)
	}
}

func TestTenantQueuesValidate(t *testing.T) {
	for _, c := range []struct {
		m    TenantQueues
		want string
	}{
		{TenantQueues{"a.b": {"q"}}, `key "a.b" must be a tenant name`},
		{TenantQueues{"team-a": nil}, "tenant_queues.team-a must name at least one queue"},
		{TenantQueues{"team-a": {"worker"}}, "reserved"},
		{TenantQueues{AnyTenant: {"bad queue"}}, "tenant_queues.*"},
	} {
		if err := (Policy{TenantQueues: c.m}).Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%v) = %v, want an error containing %q", c.m, err, c.want)
		}
	}
}
