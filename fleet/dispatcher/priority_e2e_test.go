package dispatcher_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/store"
)

// TestBulkSetPriorityMovesLevels: set_priority moves queued tasks up to
// a higher priority level and down to a lower one; one worker with one slot then
// starts the raised tasks first and the lowered ones last, each once.
func TestBulkSetPriorityMovesLevels(t *testing.T) {
	f, c := apiFleet(t, fleettest.Options{Workers: 1, Slots: 1, SQLite: true, NoWorkers: true})
	ctx := context.Background()
	normal := submitLabelled(t, c, 4, map[string]string{"batch": "normal"})
	urgent := submitLabelled(t, c, 3, map[string]string{"batch": "urgent"})
	later := submitLabelled(t, c, 2, map[string]string{"batch": "later"})

	high, low := 100, -5
	_, err := c.BulkPreview(ctx, api.BulkRequest{Action: api.BulkSetPriority, Filter: api.BulkFilter{Labels: map[string]string{"batch": "urgent"}}})
	wantCode(t, "set_priority without a priority", err, http.StatusBadRequest)
	tooHigh := 5000
	_, err = c.BulkPreview(ctx, api.BulkRequest{Action: api.BulkSetPriority, Priority: &tooHigh, Filter: api.BulkFilter{Labels: map[string]string{"batch": "urgent"}}})
	wantCode(t, "a priority out of range", err, http.StatusBadRequest)
	_, err = c.BulkPreview(ctx, api.BulkRequest{Action: api.BulkCancel, Priority: &high, Filter: api.BulkFilter{Labels: map[string]string{"batch": "urgent"}}})
	wantCode(t, "a priority with cancel", err, http.StatusBadRequest)

	up := bulkDone(t, c, api.BulkRequest{Action: api.BulkSetPriority, Priority: &high, Filter: api.BulkFilter{Labels: map[string]string{"batch": "urgent"}}})
	down := bulkDone(t, c, api.BulkRequest{Action: api.BulkSetPriority, Priority: &low, Filter: api.BulkFilter{Labels: map[string]string{"batch": "later"}}})
	if up.Matched != 3 || up.Moved != 3 || down.Moved != 2 {
		t.Fatalf("jobs %+v and %+v, want 3 and 2 moved", up, down)
	}
	f.StartWorker()
	waitFinished(t, c, nil, 9)
	all := slices.Concat(normal, urgent, later)
	ranOnce(t, f, all)

	order := slices.Clone(all)
	slices.SortFunc(order, func(a, b uuid.UUID) int { return f.Task(a).StartedAt.Compare(f.Task(b).StartedAt) })
	for i, id := range order {
		want := "normal"
		switch {
		case i < 3:
			want = "urgent"
		case i >= 7:
			want = "later"
		}
		task := f.Task(id)
		if task.Labels["batch"] != want {
			t.Fatalf("the %d-th task to start is %s (priority %d), want %s", i+1, task.Labels["batch"], task.Priority, want)
		}
		if want == "urgent" && task.Priority != high || want == "later" && task.Priority != low {
			t.Fatalf("task %s has priority %d", id, task.Priority)
		}
	}
	if task := f.Task(urgent[0]); task.State != store.TaskSucceeded {
		t.Fatalf("urgent task %s", task.State)
	}
}
