package worker_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/store"
)

// TestPriorityOrdersStarts: tasks queued before any worker runs start by
// priority, whatever their submission order: a higher priority first (50
// before 5, though both are above 0), and each priority in submission order.
func TestPriorityOrdersStarts(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true, Workers: 1, Slots: 1})
	var subs []submission
	submit := func(name string, priority int) {
		spec := fleettest.Spec(name, fleettest.Step{Text: "done"})
		spec.Priority = priority
		subs = append(subs, submission{name, f.Submit(spec)})
	}
	for i := range 2 {
		submit(fmt.Sprintf("low-%d", i), -5)
	}
	for i := range 3 {
		submit(fmt.Sprintf("normal-%d", i), 0)
	}
	for i := range 2 {
		submit(fmt.Sprintf("p5-%d", i), 5)
	}
	for i := range 2 {
		submit(fmt.Sprintf("p50-%d", i), 50)
	}
	f.StartWorker()
	if got, want := startOrder(t, f, subs), "p50-0 p50-1 p5-0 p5-1 normal-0 normal-1 normal-2 low-0 low-1"; got != want {
		t.Fatalf("start order %s\nwant           %s", got, want)
	}
}

// TestChildRunsAboveItsParentsPriority: a child runs at its parent's
// priority + 1, so once spawned it starts before the tasks of its parent's
// priority that were queued before it, though they were submitted first.
func TestChildRunsAboveItsParentsPriority(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true, Workers: 1, Slots: 1})
	parent := sharedSpec(t, "parent",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Spawn("child", fleettest.Step{Text: "child done"})}},
		fleettest.Step{Calls: []fleettest.Call{{Name: "wait", Args: map[string]any{"agent_id": "{{agent:0}}"}}}},
		fleettest.Step{Text: "parent done"})
	parent.Priority = 5
	parentID := f.Submit(parent)
	var others []uuid.UUID
	for i := range 2 {
		spec := fleettest.Spec(fmt.Sprintf("other-%d", i), fleettest.Step{Text: "done"})
		spec.Priority = 5
		others = append(others, f.Submit(spec))
	}
	f.StartWorker()
	succeeded(t, f.WaitDone(parentID))
	kids := children(t, f, parentID)
	if len(kids) != 1 {
		t.Fatalf("%d children, want 1", len(kids))
	}
	child := f.WaitDone(kids[0].ID)
	if child.Priority != 6 {
		t.Fatalf("child priority %d, want its parent's 5 + 1", child.Priority)
	}
	for _, id := range others {
		other := f.WaitDone(id)
		if !child.StartedAt.Before(other.StartedAt) {
			t.Fatalf("child started at %v, after %s queued at its parent's priority (%v)", child.StartedAt, other.ID, other.StartedAt)
		}
	}
}

// submission is a task a test submitted, by name.
type submission struct {
	name string
	id   uuid.UUID
}

// startOrder waits for every submission to succeed and names them in the
// order they started.
func startOrder(t *testing.T, f *fleettest.Fleet, subs []submission) string {
	t.Helper()
	done := make([]store.Task, len(subs))
	for i, s := range subs {
		if done[i] = f.WaitDone(s.id); done[i].State != store.TaskSucceeded {
			t.Fatalf("%s: %s %s", s.name, done[i].State, done[i].Error)
		}
	}
	idx := make([]int, len(subs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return done[a].StartedAt.Compare(done[b].StartedAt) })
	var order []string
	for _, i := range idx {
		order = append(order, subs[i].name)
	}
	return strings.Join(order, " ")
}

// TestFairnessSharesSlotsBetweenTenants: a tenant's tasks submitted after
// another tenant's backlog start beside it, not after it (equal weights:
// every other start), and a task with a concurrency key runs under it.
func TestFairnessSharesSlotsBetweenTenants(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true, Workers: 1, Slots: 1})
	type sub struct {
		name string
		id   uuid.UUID
	}
	var subs []sub
	submit := func(name, tenant string) {
		spec := fleettest.Spec(name, fleettest.Step{Text: "done"})
		spec.Tenant = tenant
		subs = append(subs, sub{name, f.Submit(spec)})
	}
	for i := range 8 {
		submit(fmt.Sprintf("a-%d", i), "a")
	}
	submit("b-0", "b")
	submit("b-1", "b")
	f.StartWorker()
	started := map[string]store.Task{}
	for _, s := range subs {
		task := f.WaitDone(s.id)
		if task.State != store.TaskSucceeded {
			t.Fatalf("%s: %s %s", s.name, task.State, task.Error)
		}
		started[s.name] = task
	}
	before := 0 // a's tasks that started before b's last
	for i := range 8 {
		if started[fmt.Sprintf("a-%d", i)].StartedAt.Before(started["b-1"].StartedAt) {
			before++
		}
	}
	if before > 3 {
		t.Fatalf("%d of a's tasks started before b's second; with equal weights at most 3 (a, b, a, b)", before)
	}
}
