package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// batchTests check that CreateTasks, which drivers implement with one
// statement per batch, keeps every contract of CreateTask: the same rows,
// idempotency keys, the order of the results, all or nothing.
var batchTests = map[string]func(*testing.T, *bundle){
	"SameRowsAsOneByOne": func(t *testing.T, b *bundle) {
		parent := b.task(t, store.CreateTaskParams{})
		params := func(i int) store.CreateTaskParams {
			p := store.CreateTaskParams{Queue: fmt.Sprintf("q%d", i%3), Priority: i - 5,
				Spec: json.RawMessage(fmt.Sprintf(`{"prompt":"task %d","n":%d}`, i, i)), Labels: map[string]string{"i": fmt.Sprint(i)}}
			if i%2 == 1 {
				p.ParentID = parent.ID
			}
			return p
		}
		var batch []store.CreateTaskParams
		for i := range 10 {
			batch = append(batch, params(i))
		}
		res, err := b.s.CreateTasks(b.ctx, store.CreateTasksParams{Tasks: batch})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			one := b.task(t, params(i))
			got := b.get(t, r.Task.ID)
			sameRoot := got.RootID == one.RootID || (got.RootID == got.ID && one.RootID == one.ID)
			if got.Queue != one.Queue || got.Priority != one.Priority || got.ParentID != one.ParentID ||
				!sameRoot || got.Depth != one.Depth || got.State != store.TaskQueued || r.Existing {
				t.Fatalf("task %d: batch row %+v, one-by-one row %+v", i, got, one)
			}
			if wantRoot := map[bool]uuid.UUID{true: got.ID, false: parent.ID}[i%2 == 0]; got.RootID != wantRoot {
				t.Fatalf("task %d: RootID %s, want %s", i, got.RootID, wantRoot)
			}
			jsonEqual(t, fmt.Sprintf("task %d Spec", i), got.Spec, one.Spec)
			if got.Labels["i"] != fmt.Sprint(i) || len(got.Labels) != 1 {
				t.Fatalf("task %d labels %v", i, got.Labels)
			}
			if !got.CreatedAt.Equal(r.Task.CreatedAt) {
				t.Fatalf("task %d: CreatedAt %v returned, %v stored", i, r.Task.CreatedAt, got.CreatedAt)
			}
		}
	},
	"ResultsInInputOrder": func(t *testing.T, b *bundle) {
		var batch []store.CreateTaskParams
		var want []uuid.UUID
		for i := range 1200 { // more than a driver may put in one statement
			id := store.NewID()
			if i%2 == 0 { // leave some ids to the store
				id = uuid.Nil
			}
			want = append(want, id)
			batch = append(batch, store.CreateTaskParams{ID: id, Spec: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
		}
		res, err := b.s.CreateTasks(b.ctx, store.CreateTasksParams{Tasks: batch})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != len(batch) {
			t.Fatalf("%d results for %d tasks", len(res), len(batch))
		}
		seen := map[uuid.UUID]bool{}
		for i, r := range res {
			if want[i] != uuid.Nil && r.Task.ID != want[i] {
				t.Fatalf("result %d is task %s, want the chosen id %s", i, r.Task.ID, want[i])
			}
			jsonEqual(t, fmt.Sprintf("result %d Spec", i), r.Task.Spec, json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)))
			if seen[r.Task.ID] {
				t.Fatalf("result %d repeats task %s", i, r.Task.ID)
			}
			seen[r.Task.ID] = true
		}
	},
	"IdempotentAcrossBatches": func(t *testing.T, b *bundle) {
		batch := keyedBatch(100, "k")
		first, err := b.s.CreateTasks(b.ctx, store.CreateTasksParams{Tasks: batch})
		if err != nil {
			t.Fatal(err)
		}
		// The same keys again, with new specs and a new task in the middle.
		again := keyedBatch(100, "k")
		for i := range again {
			again[i].Spec = json.RawMessage(`{"second":true}`)
		}
		again = append(again[:50:50], append([]store.CreateTaskParams{{Spec: json.RawMessage(`{}`), IdempotencyKey: "new"}}, again[50:]...)...)
		second, err := b.s.CreateTasks(b.ctx, store.CreateTasksParams{Tasks: again})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range second {
			switch {
			case i == 50:
				if r.Existing {
					t.Fatalf("the new key came back Existing: %+v", r)
				}
			default:
				j := i
				if i > 50 {
					j = i - 1
				}
				if !r.Existing || r.Task.ID != first[j].Task.ID {
					t.Fatalf("result %d: existing=%v task %s, want the first batch's task %s", i, r.Existing, r.Task.ID, first[j].Task.ID)
				}
				jsonEqual(t, "Spec of an existing task", r.Task.Spec, batch[j].Spec)
			}
		}
		counts, err := b.s.CountTasks(b.ctx, store.CountTasksParams{})
		if err != nil {
			t.Fatal(err)
		}
		if counts[store.TaskQueued] != 101 {
			t.Fatalf("counts %v, want 101 queued", counts)
		}
	},
	"DuplicateKeyInBatchIsTheFirst": func(t *testing.T, b *bundle) {
		batch := keyedBatch(10, "d")
		batch[7].IdempotencyKey = batch[2].IdempotencyKey
		res, err := b.s.CreateTasks(b.ctx, store.CreateTasksParams{Tasks: batch})
		if err != nil {
			t.Fatal(err)
		}
		if !res[7].Existing || res[7].Task.ID != res[2].Task.ID || res[2].Existing {
			t.Fatalf("results 2 and 7 share a key: %+v / %+v", res[2], res[7])
		}
		jsonEqual(t, "Spec", res[7].Task.Spec, batch[2].Spec)
	},
	"FailureInTheMiddleStoresNothing": func(t *testing.T, b *bundle) {
		taken := b.task(t, store.CreateTaskParams{})
		for _, tc := range []struct {
			name string
			bad  store.CreateTaskParams
			want error
		}{
			{"missing parent", store.CreateTaskParams{Spec: json.RawMessage(`{}`), ParentID: uuid.New(), IdempotencyKey: "bad"}, store.ErrNotFound},
			{"id taken", store.CreateTaskParams{Spec: json.RawMessage(`{}`), ID: taken.ID}, store.ErrConflict},
		} {
			batch := keyedBatch(100, "m")
			batch[50] = tc.bad
			_, err := b.s.CreateTasks(b.ctx, store.CreateTasksParams{Tasks: batch})
			wantErr(t, err, tc.want)
			if errors.Is(tc.want, store.ErrNotFound) && !strings.Contains(err.Error(), "task 50 ") {
				t.Fatalf("%s: error %q does not name task 50 of the batch", tc.name, err)
			}
			counts, err := b.s.CountTasks(b.ctx, store.CountTasksParams{})
			if err != nil {
				t.Fatal(err)
			}
			if counts[store.TaskQueued] != 1 {
				t.Fatalf("%s: after a failed batch the counts are %v, want only the one task from before", tc.name, counts)
			}
		}
		// The keys of the failed batches are free.
		res, err := b.s.CreateTasks(b.ctx, store.CreateTasksParams{Tasks: keyedBatch(100, "m")})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if r.Existing {
				t.Fatalf("result %d is Existing after failed batches stored nothing", i)
			}
		}
	},
	"ParentInTheSameBatch": func(t *testing.T, b *bundle) {
		root := store.NewID()
		child := store.NewID()
		res, err := b.s.CreateTasks(b.ctx, store.CreateTasksParams{Tasks: []store.CreateTaskParams{
			{ID: root, Spec: json.RawMessage(`{}`)},
			{ID: child, ParentID: root, Spec: json.RawMessage(`{}`)},
			{ParentID: child, Spec: json.RawMessage(`{}`)},
		}})
		if err != nil {
			t.Fatal(err)
		}
		if g := res[2].Task; g.RootID != root || g.Depth != 2 || g.ParentID != child {
			t.Fatalf("grandchild created in the batch: %+v", g)
		}
	},
}

// keyedBatch is n tasks with the idempotency keys prefix-0 ... prefix-(n-1).
func keyedBatch(n int, prefix string) []store.CreateTaskParams {
	out := make([]store.CreateTaskParams, n)
	for i := range out {
		out[i] = store.CreateTaskParams{Spec: json.RawMessage(fmt.Sprintf(`{"key":%d}`, i)), IdempotencyKey: fmt.Sprintf("%s-%d", prefix, i)}
	}
	return out
}
