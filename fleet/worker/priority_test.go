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
// band, whatever their submission order: high (priority > 0) first, then
// normal, then low, and each band in submission order.
func TestPriorityOrdersStarts(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true, Workers: 1, Slots: 1})
	type sub struct {
		name string
		id   uuid.UUID
	}
	var subs []sub
	submit := func(name string, priority int) {
		spec := fleettest.Spec(name, fleettest.Step{Text: "done"})
		spec.Priority = priority
		subs = append(subs, sub{name, f.Submit(spec)})
	}
	for i := range 2 {
		submit(fmt.Sprintf("low-%d", i), -5)
	}
	for i := range 4 {
		submit(fmt.Sprintf("normal-%d", i), 0)
	}
	for i := range 2 {
		submit(fmt.Sprintf("high-%d", i), 50)
	}
	f.StartWorker()
	var done []store.Task
	for _, s := range subs {
		task := f.WaitDone(s.id)
		if task.State != store.TaskSucceeded {
			t.Fatalf("%s: %s %s", s.name, task.State, task.Error)
		}
		done = append(done, task)
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
	want := "high-0 high-1 normal-0 normal-1 normal-2 normal-3 low-0 low-1"
	if got := strings.Join(order, " "); got != want {
		t.Fatalf("start order %s\nwant           %s", got, want)
	}
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
