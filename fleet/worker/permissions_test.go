package worker_test

import (
	"testing"

	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/queue"
)

// TestRestrictedNATSUsersRunATaskTree: with the shipped NATS permissions
// (the harness as the dispatcher user, the workers as the worker user) a
// parent of another tenant spawns two children on two workers, waits for
// them and succeeds; its events are under its tenant's subjects, and
// neither user was refused anything on the way.
func TestRestrictedNATSUsersRunATaskTree(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 2, Restricted: true})
	spec := sharedSpec(t, "restricted parent", fanOut([][]fleettest.Step{{{Text: "one"}}, {{Text: "two"}}})...)
	spec.Tenant = "team-a"
	id := f.Submit(spec)
	succeeded(t, f.WaitDone(id))
	if kids := children(t, f, id); len(kids) != 2 {
		t.Fatalf("%d children, want 2", len(kids))
	}
	sub, err := f.Queue.SubscribeEvents(waitCtx(t), queue.EventFilter{Tenants: []string{"team-a"}, TaskID: id.String(), Kind: "SESSION_END"}, queue.FromStart())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	ev, err := sub.Next(waitCtx(t))
	if err != nil {
		t.Fatalf("the parent's SESSION_END under team-a: %v", err)
	}
	if ev.Tenant != "team-a" {
		t.Fatalf("SESSION_END tenant %q on %s", ev.Tenant, ev.Subject)
	}
	if v := f.PermissionViolations(); len(v) > 0 {
		t.Fatalf("the server refused the fleet %d times, first: %v", len(v), v[0])
	}
}
