package delivery_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/delivery"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/store"
)

// TestDeliverRefusesOutsideScope: the worker checks a delivery against
// the scope of its credentials before anything is pushed, whatever the
// dispatcher let through: a base branch such as main (the default scope
// allows agentfleet/* only), a remote outside the token's repositories.
func TestDeliverRefusesOutsideScope(t *testing.T) {
	bare := newOrigin(t)
	other := newOrigin(t)
	st, id := taskStore(t)
	ctx := context.Background()
	dir := workspace(t, bare, map[string]string{"README": "changed\n"})

	res := deliverOnce(ctx, request(dir, bare, id, fleet.Delivery{Branch: "main"}, creds{}, st))
	if res.Pushed || !strings.Contains(res.Error, `delivery.branch "main" is not a branch a delivery without credentials may push to (allowed: agentfleet/*)`) {
		t.Errorf("a push to main: %+v", res)
	}
	req := request(dir, bare, id, fleet.Delivery{Branch: "main"}, creds{}, st)
	req.Config.Branches = []string{"main"} // the operator allows it
	if res := deliverOnce(ctx, req); !res.Pushed || res.Error != "" {
		t.Errorf("a push to main where the operator allows it: %+v", res)
	}

	// A key scoped to the task's repository may not push elsewhere.
	c := creds{keys: map[string]delivery.SSHKey{"deploy": {Scope: fleet.DeliveryScope{Repos: []string{bare}}}}}
	spec := fleet.Delivery{Remote: other, Credentials: fleet.DeliveryCredentials{SSHKey: "deploy"}}
	res = deliverOnce(ctx, request(dir, bare, id, spec, c, st))
	if res.Pushed || !strings.Contains(res.Error, `delivery.remote "`+other+`" is not a repository ssh_key "deploy" may push to`) {
		t.Errorf("a push outside the key's repositories: %+v", res)
	}
	if pushes(t, other) != 0 || pushes(t, bare) != 1 {
		t.Errorf("%d pushes to the other repository, %d to the task's; want 0 and 1", pushes(t, other), pushes(t, bare))
	}
}

// TestTaskOutsideScopeFailsBeforeItsSession: a task that reached a worker
// with a delivery outside its scope (a dispatcher without the scopes, or
// a spec written to the queue directly) fails before its session starts,
// with the field named, and pushes nothing.
func TestTaskOutsideScopeFailsBeforeItsSession(t *testing.T) {
	bare := newOrigin(t)
	f := fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true, Worker: func(_ int, c *worker.Config) {
		c.Delivery.Repos = []string{"/nowhere/else"}
	}})
	id := f.Submit(fixSpec(bare, &fleet.Delivery{Branch: "main"}))
	task := f.WaitDone(id)
	if task.State != store.TaskFailed || !strings.Contains(string(task.Result), `delivery.branch \"main\" is not a branch`) {
		t.Fatalf("state %s (%s), result %s", task.State, task.Error, task.Result)
	}
	id = f.Submit(fixSpec(bare, &fleet.Delivery{}))
	task = f.WaitDone(id)
	if task.State != store.TaskFailed || !strings.Contains(string(task.Result), `is not a repository a delivery without credentials may push to (allowed: /nowhere/else)`) {
		t.Fatalf("state %s (%s), result %s", task.State, task.Error, task.Result)
	}
	if n := pushes(t, bare); n != 0 {
		t.Errorf("%d pushes", n)
	}
	if turns, err := f.Store.LoadTurns(context.Background(), store.LoadTurnsParams{SessionID: id}); err == nil && len(turns) > 0 {
		t.Errorf("the session ran: %d turns", len(turns))
	}
}
