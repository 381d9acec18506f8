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
