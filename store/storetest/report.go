package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/store"
)

var reportTests = map[string]func(*testing.T, *bundle){
	// TreeSums: the root tasks of a label, oldest first, each with the
	// sessions of its whole tree summed; children are not rows of their
	// own; a label, a tenant and a limit narrow them.
	"TreeSums": func(t *testing.T, b *bundle) {
		spend := func(task store.Task, in int64, cost float64) {
			t.Helper()
			s := b.session(t, task.ID)
			if _, err := b.s.UpdateSession(b.ctx, store.UpdateSessionParams{ID: s.ID,
				AddUsage: store.Usage{InputTokens: in, OutputTokens: 1}, AddCostUSD: cost}); err != nil {
				t.Fatal(err)
			}
		}
		ab := map[string]string{"backlog": "q3", "model": "a"}
		first := b.running(t, store.CreateTaskParams{Labels: ab}, "w1")
		spend(first, 100, 0.5)
		child := b.task(t, store.CreateTaskParams{ParentID: first.ID, Labels: ab})
		spend(child, 20, 0.25)
		b.move(t, first.ID, store.TaskRunning, store.TaskSucceeded)
		second := b.task(t, store.CreateTaskParams{Labels: map[string]string{"backlog": "q3", "model": "b"}})
		b.task(t, store.CreateTaskParams{Labels: map[string]string{"backlog": "q4"}})
		b.task(t, store.CreateTaskParams{Labels: ab, Tenant: "other"})

		get := func(p store.ReportTasksParams) store.ReportTasksResult {
			t.Helper()
			res, err := b.s.ReportTasks(b.ctx, p)
			if err != nil {
				t.Fatalf("ReportTasks(%+v): %v", p, err)
			}
			return res
		}
		res := get(store.ReportTasksParams{Labels: map[string]string{"backlog": "q3"}, Tenants: []string{"default"}})
		if len(res.Tasks) != 2 || res.Truncated {
			t.Fatalf("q3 of tenant default: %+v", res)
		}
		one, two := res.Tasks[0], res.Tasks[1]
		if one.Task.ID != first.ID || two.Task.ID != second.ID {
			t.Fatalf("not the roots oldest first: %s %s, want %s %s", one.Task.ID, two.Task.ID, first.ID, second.ID)
		}
		if one.Sessions != 2 || one.Usage.InputTokens != 120 || one.Usage.OutputTokens != 2 || one.CostUSD != 0.75 ||
			one.Task.State != store.TaskSucceeded || one.Task.FinishedAt.IsZero() {
			t.Fatalf("first task's tree sums: %+v", one)
		}
		if two.Sessions != 0 || two.CostUSD != 0 || two.Task.State != store.TaskQueued {
			t.Fatalf("second task: %+v", two)
		}
		if r := get(store.ReportTasksParams{Labels: map[string]string{"model": "a"}}); len(r.Tasks) != 2 {
			t.Fatalf("model=a of every tenant: %d tasks, want 2", len(r.Tasks))
		}
		if r := get(store.ReportTasksParams{Tenants: []string{}}); len(r.Tasks) != 0 {
			t.Fatalf("no tenant: %+v", r)
		}
		if r := get(store.ReportTasksParams{Limit: 2}); len(r.Tasks) != 2 || !r.Truncated || r.Tasks[0].Task.ID != first.ID {
			t.Fatalf("limit 2 of 4: %d tasks, truncated %v", len(r.Tasks), r.Truncated)
		}
		if r := get(store.ReportTasksParams{CreatedAfter: time.Now().Add(time.Hour)}); len(r.Tasks) != 0 {
			t.Fatalf("tasks of the future: %+v", r)
		}
	},
	"BadInput": func(t *testing.T, b *bundle) {
		for _, p := range []store.ReportTasksParams{{Limit: -1}, {Limit: store.MaxReportTasks + 1},
			{CreatedAfter: time.Now(), CreatedBefore: time.Now().Add(-time.Hour)}} {
			_, err := b.s.ReportTasks(b.ctx, p)
			var inv *store.InvalidError
			if !errors.As(err, &inv) || inv.Field == "" {
				t.Fatalf("ReportTasks(%+v): %v, want an InvalidError naming the field", p, err)
			}
		}
	},
}
