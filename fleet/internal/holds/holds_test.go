package holds_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/internal/holds"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
	"github.com/agentfleet/agentfleet/store"
)

func TestMain(m *testing.M) { testenv.VerifyTestMain(m) }

const wait = 10 * time.Second

// open returns two Sets on one NATS server: a writer and a watcher.
func open(t *testing.T) (*holds.Set, *holds.Set) {
	t.Helper()
	ns := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	var sets []*holds.Set
	for range 2 {
		q, err := queue.Open(ctx, ns.Connect(t), queue.Config{})
		if err != nil {
			t.Fatal(err)
		}
		s, err := holds.Open(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		sets = append(sets, s)
	}
	return sets[0], sets[1]
}

// until waits for s's mirror to satisfy cond.
func until(t *testing.T, s *holds.Set, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(wait)
	for {
		ch := s.Changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%s: not seen in %s", what, wait)
		}
	}
}

func task(labels map[string]string) store.Task {
	id := uuid.New()
	return store.Task{ID: id, RootID: id, State: store.TaskQueued, Queue: "default", Tenant: "team-a", Labels: labels,
		CreatedAt: time.Now()}
}

// TestRuleHolds: a filter rule holds the queued root tasks it selects in
// its tenants; never a child, a running task or another tenant's.
func TestRuleHolds(t *testing.T) {
	r := holds.Rule{Filter: api.BulkFilter{Labels: map[string]string{"run": "x"}}, Tenants: []string{"team-a"}}
	held := task(map[string]string{"run": "x", "other": "y"})
	if !r.Holds(held) {
		t.Fatal("a queued root task with the label is not held")
	}
	child := held
	child.ParentID = uuid.New()
	running := held
	running.State = store.TaskRunning
	otherTenant := held
	otherTenant.Tenant = "team-b"
	for what, tk := range map[string]store.Task{"a child": child, "a running task": running, "another tenant's": otherTenant,
		"another label's": task(map[string]string{"run": "z"})} {
		if r.Holds(tk) {
			t.Errorf("%s is held", what)
		}
	}
	if q := holds.QueueRule("default", "admin", ""); !q.Holds(held) || q.Holds(child) || q.Key() != "queue.default" {
		t.Errorf("queue rule %q", q.Key())
	}
	a := holds.Rule{Filter: api.BulkFilter{Labels: map[string]string{"a": "1", "b": "2"}}, Tenants: []string{"x", "y"}}
	b := holds.Rule{Filter: api.BulkFilter{Labels: map[string]string{"b": "2", "a": "1"}}, Tenants: []string{"y", "x"}, By: "someone"}
	if a.Key() != b.Key() || a.Key() == r.Key() {
		t.Errorf("keys %s %s %s: the same filter and tenants must have one key, another filter another", a.Key(), b.Key(), r.Key())
	}
	if f, _ := holds.CheckFilter(api.BulkFilter{States: []store.TaskState{store.TaskFailed}}); f != "states" {
		t.Errorf("a pause of failed tasks: field %q", f)
	}
}

// TestSetMirrors: what one Set writes, another sees through its watch:
// a queue pause opens WaitQueue when it ends, held tasks come in their
// messages' order, and a release does not drop a hold written again.
func TestSetMirrors(t *testing.T) {
	w, r := open(t)
	ctx := context.Background()
	if err := w.Pause(ctx, holds.QueueRule("slow", "admin", "maintenance")); err != nil {
		t.Fatal(err)
	}
	until(t, r, "the queue pause", func() bool { return r.QueuePaused("slow") && r.Any() })
	opened := make(chan error, 1)
	go func() { opened <- r.WaitQueue(ctx, "slow") }()
	if ok, err := w.Unpause(ctx, "queue.slow"); !ok || err != nil {
		t.Fatalf("unpause: %v %v", ok, err)
	}
	select {
	case err := <-opened:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(wait):
		t.Fatal("WaitQueue did not return once the queue was resumed")
	}
	if ok, err := w.Unpause(ctx, "queue.slow"); ok || err != nil {
		t.Fatalf("unpausing twice: %v %v, want false", ok, err)
	}

	first, second := task(nil), task(nil)
	if err := w.Hold(ctx, second, 20, "w1"); err != nil {
		t.Fatal(err)
	}
	if err := w.Hold(ctx, first, 10, "w1"); err != nil {
		t.Fatal(err)
	}
	until(t, r, "two held tasks", func() bool { return len(r.Held()) == 2 })
	held := r.Held()
	if held[0].TaskID != first.ID || held[1].TaskID != second.ID {
		t.Fatalf("held order %v, want the lower sequence first", held)
	}
	stale := held[0]
	if err := w.Hold(ctx, first, 30, "w2"); err != nil { // held again, later
		t.Fatal(err)
	}
	until(t, r, "the second hold", func() bool { return len(r.Held()) == 2 && r.Held()[1].TaskID == first.ID })
	if err := r.Released(ctx, stale); err != nil {
		t.Fatal(err)
	}
	if err := r.Released(ctx, r.Held()[0]); err != nil {
		t.Fatal(err)
	}
	until(t, r, "one release", func() bool { return len(r.Held()) == 1 })
	if got := r.Held()[0]; got.TaskID != first.ID || got.Seq != 30 {
		t.Fatalf("left %+v, want the second hold of the first task", got)
	}

	if err := w.Moved(ctx, first.ID, 50); err != nil {
		t.Fatal(err)
	}
	until(t, r, "the move", func() bool { return len(r.Moves()) == 1 })
	if !r.StaleStart(first.ID, 49) || r.StaleStart(first.ID, 50) || r.StaleStart(second.ID, 1) {
		t.Fatal("StaleStart: only messages older than the move are stale")
	}
}
