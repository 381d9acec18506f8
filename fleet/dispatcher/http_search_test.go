package dispatcher

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/store"
)

// TestAPISearch: GET /v1/tasks?q= matches prompts and failure reasons,
// combines with the other filters, and never shows another tenant's
// task, even to a search that names it; a bad q is a 400 naming q.
func TestAPISearch(t *testing.T) {
	bothStores(t, func(t *testing.T, mk storeMaker) {
		f := setupTenants(t, mk)
		ctx := context.Background()
		submit := func(who, prompt string) uuid.UUID {
			t.Helper()
			res, err := f.clients[who].Submit(ctx, validSpec(prompt))
			if err != nil {
				t.Fatalf("%s submits: %v", who, err)
			}
			return res.Task.ID
		}
		lint := submit("submitter", "repair the linter configuration")
		flaky := submit("submitter", "deflake the payments tests")
		if _, err := f.st.TransitionTask(ctx, store.TransitionTaskParams{ID: flaky, From: store.TaskQueued, To: store.TaskFailed, Error: "linter timed out"}); err != nil {
			t.Fatal(err)
		}
		submit("b-submitter", "repair the linter of team b")

		ids := func(c *client.Client, lf client.ListFilter) []uuid.UUID {
			t.Helper()
			l, err := c.List(ctx, lf)
			if err != nil {
				t.Fatalf("search %+v: %v", lf, err)
			}
			out := []uuid.UUID{}
			for _, task := range l.Tasks {
				out = append(out, task.ID)
			}
			return out
		}
		viewer := f.clients["viewer"]
		if got := ids(viewer, client.ListFilter{Query: "linter"}); !slices.Equal(got, []uuid.UUID{flaky, lint}) {
			t.Fatalf("team-a's viewer searching linter got %v, want [%s %s] (team b's stays out)", got, flaky, lint)
		}
		if got := ids(viewer, client.ListFilter{Query: "team b"}); len(got) != 0 {
			t.Fatalf("a search for team b's prompt showed team-a's viewer %v", got)
		}
		if got := ids(viewer, client.ListFilter{Query: "linter", Tenant: "team-b"}); len(got) != 0 {
			t.Fatalf("?tenant=team-b&q= showed team-a's viewer %v", got)
		}
		if got := ids(viewer, client.ListFilter{Query: "linter", States: []store.TaskState{store.TaskQueued}}); !slices.Equal(got, []uuid.UUID{lint}) {
			t.Fatalf("search with state=queued got %v, want [%s]", got, lint)
		}
		if got := ids(f.client, client.ListFilter{Query: "repair linter"}); len(got) != 2 {
			t.Fatalf("the admin of every tenant found %d tasks, want 2 (both tenants')", len(got))
		}
		for _, q := range []string{"-linter", strings.Repeat("x", store.MaxQueryLen+1)} {
			code, d, raw := f.rawCall(t, http.MethodGet, "/v1/tasks?q="+url.QueryEscape(q), nil, testToken)
			if code != http.StatusBadRequest || d.Code != api.CodeInvalid || d.Field != "q" {
				t.Errorf("GET /v1/tasks?q=%.20s: %d %s, want 400 naming q", q, code, raw)
			}
		}
	})
}
