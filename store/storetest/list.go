package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

var listTests = map[string]func(*testing.T, *bundle){
	"Pagination": func(t *testing.T, b *bundle) {
		const n = 25
		created := map[uuid.UUID]bool{}
		for range n {
			created[b.task(t, store.CreateTaskParams{}).ID] = true
		}
		seen := map[uuid.UUID]bool{}
		var last store.Task
		cursor, pages := "", 0
		for {
			page, err := b.s.ListTasks(b.ctx, store.ListTasksParams{Limit: 10, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, task := range page.Tasks {
				if seen[task.ID] || !created[task.ID] {
					t.Fatalf("page %d: task %s repeated or unknown", pages, task.ID)
				}
				if last.ID != uuid.Nil && task.CreatedAt.After(last.CreatedAt) {
					t.Fatalf("not newest first: %v after %v", task.CreatedAt, last.CreatedAt)
				}
				seen[task.ID], last = true, task
			}
			if page.NextCursor == "" {
				break
			}
			cursor = page.NextCursor
			b.task(t, store.CreateTaskParams{}) // new tasks do not disturb the pages after
		}
		if len(seen) != n || pages != 3 {
			t.Fatalf("saw %d tasks in %d pages, want %d in 3", len(seen), pages, n)
		}
		_, err := b.s.ListTasks(b.ctx, store.ListTasksParams{Cursor: "not-a-cursor"})
		wantErr(t, err, store.ErrInvalid)
	},
	"Filters": func(t *testing.T, b *bundle) {
		f := b.family(t)
		labelled := b.task(t, store.CreateTaskParams{Queue: "gpu", Labels: map[string]string{"team": "pay", "env": "ci"}})
		mid := labelled.CreatedAt
		later := b.task(t, store.CreateTaskParams{Labels: map[string]string{"team": "pay"}})
		cases := []struct {
			name string
			p    store.ListTasksParams
			want []uuid.UUID
		}{
			{"state", store.ListTasksParams{States: []store.TaskState{store.TaskRunning}}, []uuid.UUID{f.root.ID}},
			{"queue", store.ListTasksParams{Queue: "gpu"}, []uuid.UUID{labelled.ID}},
			{"labels", store.ListTasksParams{Labels: map[string]string{"team": "pay"}}, []uuid.UUID{later.ID, labelled.ID}},
			{"two labels", store.ListTasksParams{Labels: map[string]string{"team": "pay", "env": "ci"}}, []uuid.UUID{labelled.ID}},
			{"root", store.ListTasksParams{RootID: f.root.ID, States: []store.TaskState{store.TaskQueued}}, []uuid.UUID{f.a1.ID, f.b.ID, f.a.ID}},
			{"parent", store.ListTasksParams{ParentID: f.a.ID}, []uuid.UUID{f.a1.ID}},
			{"created after", store.ListTasksParams{CreatedAfter: mid}, []uuid.UUID{later.ID, labelled.ID}},
			{"created before", store.ListTasksParams{CreatedBefore: mid, RootID: f.root.ID, ParentID: f.root.ID}, []uuid.UUID{f.b.ID, f.a.ID}},
			{"stale heartbeat", store.ListTasksParams{HeartbeatBefore: time.Now().Add(time.Hour)}, []uuid.UUID{f.root.ID}},
			{"fresh heartbeat", store.ListTasksParams{HeartbeatBefore: f.root.HeartbeatAt.Add(-time.Hour)}, nil},
		}
		for _, c := range cases {
			page, err := b.s.ListTasks(b.ctx, c.p)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			if got := ids(page.Tasks); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			}
		}
	},
	"CountByState": func(t *testing.T, b *bundle) {
		for range 3 {
			b.task(t, store.CreateTaskParams{Labels: map[string]string{"batch": "x"}})
		}
		run := b.running(t, store.CreateTaskParams{Labels: map[string]string{"batch": "x"}}, "w")
		b.move(t, run.ID, store.TaskRunning, store.TaskSucceeded)
		b.running(t, store.CreateTaskParams{Labels: map[string]string{"batch": "x"}}, "w")
		b.task(t, store.CreateTaskParams{Labels: map[string]string{"batch": "y"}})
		counts, err := b.s.CountTasks(b.ctx, store.CountTasksParams{Labels: map[string]string{"batch": "x"}})
		if err != nil {
			t.Fatal(err)
		}
		want := map[store.TaskState]int64{store.TaskQueued: 3, store.TaskRunning: 1, store.TaskSucceeded: 1}
		if fmt.Sprint(counts) != fmt.Sprint(want) {
			t.Fatalf("counts = %v, want %v", counts, want)
		}
		all, err := b.s.CountTasks(b.ctx, store.CountTasksParams{})
		if err != nil || all[store.TaskQueued] != 4 {
			t.Fatalf("all counts = %v, %v", all, err)
		}
	},
}
