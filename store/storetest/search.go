package storetest

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

// search lists the ids of the tasks p matches, in order.
func (b *bundle) search(t *testing.T, p store.ListTasksParams) []uuid.UUID {
	t.Helper()
	page, err := b.s.ListTasks(b.ctx, p)
	if err != nil {
		t.Fatalf("ListTasks %+v: %v", p, err)
	}
	ids := make([]uuid.UUID, len(page.Tasks))
	for i, task := range page.Tasks {
		ids[i] = task.ID
	}
	return ids
}

var searchTests = map[string]func(*testing.T, *bundle){
	// Prompts, final answers and failure reasons match, with stemming,
	// phrases, "or" and -exclusion, combined with the other filters; a
	// tenant filter keeps another tenant's tasks out of every match.
	"TextSearch": func(t *testing.T, b *bundle) {
		prompt := func(s string) json.RawMessage {
			return json.RawMessage(`{"prompt":` + string(must(json.Marshal(s))) + `}`)
		}
		lint := b.task(t, store.CreateTaskParams{Tenant: "a", Spec: prompt("Fix the failing linter in pkg/router"), Labels: map[string]string{"team": "x"}})
		answered := b.running(t, store.CreateTaskParams{Tenant: "a", Spec: prompt("summarise the week")}, "w1")
		if _, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: answered.ID, From: store.TaskRunning, To: store.TaskSucceeded,
			Result: json.RawMessage(`{"final_text":"The migrations were renumbered twice"}`)}); err != nil {
			t.Fatalf("TransitionTask: %v", err)
		}
		failed := b.running(t, store.CreateTaskParams{Tenant: "a", Spec: prompt("deploy staging")}, "w1")
		if _, err := b.s.TransitionTask(b.ctx, store.TransitionTaskParams{ID: failed.ID, From: store.TaskRunning, To: store.TaskFailed,
			Error: "budget exhausted: linter loop"}); err != nil {
			t.Fatalf("TransitionTask: %v", err)
		}
		other := b.task(t, store.CreateTaskParams{Tenant: "b", Spec: prompt("fix the linter for tenant b")})

		cases := []struct {
			p    store.ListTasksParams
			want []uuid.UUID
		}{
			{store.ListTasksParams{Query: "linter", Tenants: []string{"a"}}, []uuid.UUID{failed.ID, lint.ID}},
			{store.ListTasksParams{Query: "linters"}, []uuid.UUID{other.ID, failed.ID, lint.ID}}, // stemmed
			{store.ListTasksParams{Query: "renumber", Tenants: []string{"a"}}, []uuid.UUID{answered.ID}},
			{store.ListTasksParams{Query: "renumber", Tenants: []string{"b"}}, []uuid.UUID{}},
			{store.ListTasksParams{Query: `"failing linter"`}, []uuid.UUID{lint.ID}},
			{store.ListTasksParams{Query: `"linter failing"`}, []uuid.UUID{}},
			{store.ListTasksParams{Query: "linter -budget", Tenants: []string{"a"}}, []uuid.UUID{lint.ID}},
			{store.ListTasksParams{Query: "staging or week"}, []uuid.UUID{failed.ID, answered.ID}},
			{store.ListTasksParams{Query: "linter", States: []store.TaskState{store.TaskFailed}}, []uuid.UUID{failed.ID}},
			{store.ListTasksParams{Query: "linter", Labels: map[string]string{"team": "x"}}, []uuid.UUID{lint.ID}},
			{store.ListTasksParams{Query: "linter", Tenants: []string{}}, []uuid.UUID{}},
			{store.ListTasksParams{Query: `fix "pkg/router" (* ""`}, []uuid.UUID{lint.ID}}, // syntax is never an error
		}
		for _, c := range cases {
			if got := b.search(t, c.p); !slices.Equal(got, c.want) {
				t.Errorf("search %q tenants %v: got %v, want %v", c.p.Query, c.p.Tenants, got, c.want)
			}
		}
		// Pages of matches follow the cursor.
		first, err := b.s.ListTasks(b.ctx, store.ListTasksParams{Query: "linter", Limit: 2})
		if err != nil || len(first.Tasks) != 2 || first.NextCursor == "" {
			t.Fatalf("first page: %d tasks, cursor %q, err %v", len(first.Tasks), first.NextCursor, err)
		}
		if got := b.search(t, store.ListTasksParams{Query: "linter", Limit: 2, Cursor: first.NextCursor}); !slices.Equal(got, []uuid.UUID{lint.ID}) {
			t.Fatalf("second page %v, want [%s]", got, lint.ID)
		}
	},
	"SearchBadQuery": func(t *testing.T, b *bundle) {
		_, err := b.s.ListTasks(b.ctx, store.ListTasksParams{Query: "-linter"})
		wantErr(t, err, store.ErrInvalid)
		_, err = b.s.ListTasks(b.ctx, store.ListTasksParams{Query: string(make([]byte, store.MaxQueryLen+1))})
		wantErr(t, err, store.ErrInvalid)
	},
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
