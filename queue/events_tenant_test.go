package queue_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/queue"
)

// A filter naming tenants yields only their events, on the subjects that
// carry the tenant; an empty one yields every tenant's.
func TestEventFilterTenantsKeepsToThoseTenants(t *testing.T) {
	b := setup(t, queue.Config{})
	p := newPublisher(t, b.client)
	for i, tenant := range []string{"team-a", "team-b", "team-a", ""} {
		ev := event("s"+tenant, uint64(i+1), "NOTE", `{}`)
		ev.Tenant = tenant
		if err := p.PublishConfirmed(b.ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	onlyA := subscribe(t, b.client, queue.EventFilter{Tenants: []string{"team-a"}}, queue.FromStart())
	for range 2 {
		ev := next(t, onlyA)
		if ev.Tenant != "team-a" || ev.Subject != "agentfleet.events.team-a.root."+ev.TaskID+".NOTE" {
			t.Fatalf("team-a's subscription got tenant %q on %s", ev.Tenant, ev.Subject)
		}
	}
	ctx, cancel := context.WithTimeout(b.ctx, 300*time.Millisecond)
	defer cancel()
	if ev, err := onlyA.Next(ctx); err == nil {
		t.Fatalf("team-a's subscription got a third event: tenant %q", ev.Tenant)
	}
	all := subscribe(t, b.client, queue.EventFilter{Tenants: []string{"team-b", queue.DefaultTenant}}, queue.FromStart())
	got := map[string]bool{}
	for range 2 {
		got[next(t, all).Tenant] = true
	}
	if !got["team-b"] || !got[queue.DefaultTenant] {
		t.Fatalf("two-tenant subscription got %v, want team-b and default (an empty Tenant)", got)
	}
	if _, err := b.client.SubscribeEvents(b.ctx, queue.EventFilter{Tenants: []string{"a.>"}}, queue.FromStart()); err == nil {
		t.Fatal("a tenant with subject wildcards was accepted")
	}
}

// An event stored under the layout before tenants still counts for
// LastSeq and HasEvent, so a session resumed across the upgrade keeps its
// Seq gapless.
func TestLastSeqReadsTheLayoutBeforeTenants(t *testing.T) {
	b := setup(t, queue.Config{})
	ev := event("old", 7, "SESSION_END", `{}`)
	body, _ := json.Marshal(ev)
	if _, err := b.nc.Request("agentfleet.events.root.task-old.SESSION_END", body, waitTimeout); err != nil {
		t.Fatalf("storing an old-layout event: %v", err)
	}
	seq, err := b.client.LastSeq(b.ctx, "root", "task-old")
	if err != nil || seq != 7 {
		t.Fatalf("LastSeq = %d, %v; want 7 from the old layout", seq, err)
	}
	if has, err := b.client.HasEvent(b.ctx, "root", "task-old", "SESSION_END"); err != nil || !has {
		t.Fatalf("HasEvent = %v, %v; want true", has, err)
	}
	p := newPublisher(t, b.client)
	ev.Seq, ev.ID, ev.Tenant = 8, "old-8", "team-a"
	if err := p.PublishConfirmed(b.ctx, ev); err != nil {
		t.Fatal(err)
	}
	if seq, err := b.client.LastSeq(b.ctx, "root", "task-old"); err != nil || seq != 8 {
		t.Fatalf("LastSeq after a new-layout event = %d, %v; want 8", seq, err)
	}
}
