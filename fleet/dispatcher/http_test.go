package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

func TestAPISubmitGetList(t *testing.T) {
	bothStores(t, func(t *testing.T, mk storeMaker) {
		b := setupAPI(t, mk)
		ctx := context.Background()
		spec := validSpec("fix the flaky test")
		spec.Labels = map[string]string{"team": "payments"}
		got, err := b.client.Submit(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		if got.Existing || got.Task.State != store.TaskQueued || got.Task.RootID != got.Task.ID || got.Task.Queue != fleet.DefaultQueue {
			t.Fatalf("submit answered %+v", got)
		}
		if n := b.tasksInStream(t); n != 1 {
			t.Fatalf("TASKS holds %d messages, want 1", n)
		}
		view, err := b.client.Get(ctx, got.Task.ID)
		if err != nil {
			t.Fatal(err)
		}
		var stored fleet.TaskSpec
		if err := json.Unmarshal(view.Spec, &stored); err != nil || stored.Prompt != spec.Prompt || stored.ChildPolicy != fleet.ChildCancel || stored.SubagentDepthLimit() != 1 {
			t.Fatalf("stored spec %s (%v), want the prompt with defaults", view.Spec, err)
		}
		batch := []fleet.TaskSpec{validSpec("a"), validSpec("b"), validSpec("c")}
		batch[1].Labels = map[string]string{"team": "payments"}
		br, err := b.client.SubmitBatch(ctx, batch)
		if err != nil {
			t.Fatal(err)
		}
		if len(br.Tasks) != 3 {
			t.Fatalf("batch answered %d tasks", len(br.Tasks))
		}
		if n := b.tasksInStream(t); n != 4 {
			t.Fatalf("TASKS holds %d messages, want 4", n)
		}
		list, err := b.client.List(ctx, client.ListFilter{Labels: map[string]string{"team": "payments"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Tasks) != 2 {
			t.Fatalf("label filter found %d tasks, want 2", len(list.Tasks))
		}
		page1, err := b.client.List(ctx, client.ListFilter{States: []store.TaskState{store.TaskQueued}, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(page1.Tasks) != 3 || page1.NextCursor == "" {
			t.Fatalf("first page: %d tasks, cursor %q", len(page1.Tasks), page1.NextCursor)
		}
		page2, err := b.client.List(ctx, client.ListFilter{States: []store.TaskState{store.TaskQueued}, Limit: 3, Cursor: page1.NextCursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(page2.Tasks) != 1 || page2.NextCursor != "" {
			t.Fatalf("second page: %d tasks, cursor %q", len(page2.Tasks), page2.NextCursor)
		}
		counts, err := b.client.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if counts[store.TaskQueued] != 4 || counts[store.TaskRunning] != 0 {
			t.Fatalf("counts %v", counts)
		}
		if _, err := b.client.Get(ctx, uuid.New()); !client.IsNotFound(err) {
			t.Fatalf("Get of an unknown id: %v, want 404", err)
		}
	})
}

// TestAPIBadInput: every bad submission is a 400 naming the field, and
// nothing is stored or enqueued.
func TestAPIBadInput(t *testing.T) {
	bothStores(t, func(t *testing.T, mk storeMaker) {
		b := setupAPI(t, mk)
		big := make([]fleet.TaskSpec, 11_000)
		for i := range big {
			big[i] = validSpec("x")
		}
		mixed := []fleet.TaskSpec{validSpec("a"), validSpec("b"), validSpec("c"), {Prompt: "d", Profile: "openai", Limits: fleet.Limits{MaxTokens: -3}}}
		cases := []struct {
			name, path string
			body       any
			field      string
			msg        string
		}{
			{"no prompt", "/v1/tasks", fleet.TaskSpec{Profile: "openai"}, "spec.prompt", "spec.prompt is required"},
			{"unknown profile", "/v1/tasks", fleet.TaskSpec{Prompt: "p", Profile: "llama"}, "spec.profile", `spec.profile "llama" is unknown`},
			{"negative limit", "/v1/tasks", fleet.TaskSpec{Prompt: "p", Limits: fleet.Limits{MaxTurns: -1}}, "spec.limits.max_turns", "spec.limits.max_turns must be >= 0, got -1"},
			{"ssh without key", "/v1/tasks", fleet.TaskSpec{Prompt: "p", Environment: fleet.Environment{Kind: fleet.EnvSSH, Host: "h", User: "u", WorkingDir: "/w"}},
				"spec.environment.key_ref", "spec.environment.key_ref is required"},
			{"system field", "/v1/tasks", fleet.TaskSpec{Prompt: "p", Depth: 2, ParentID: uuid.New()}, "spec.parent_id", "set by the system"},
			{"unknown field", "/v1/tasks", `{"prompt":"p","promt":"q"}`, "spec.promt", "is not a known field"},
			{"wrong type", "/v1/tasks", `{"prompt":"p","limits":{"max_turns":"ten"}}`, "spec.limits.max_turns", "must be a JSON number"},
			{"not json", "/v1/tasks", `{"prompt":`, "spec", "truncated"},
			{"empty body", "/v1/tasks", ``, "spec", "empty"},
			{"batch too large", "/v1/tasks/batch", api.BatchRequest{Tasks: big}, "tasks", "has 11000 tasks, at most 10000"},
			{"batch bad index", "/v1/tasks/batch", api.BatchRequest{Tasks: mixed}, "tasks[3].limits.max_tokens", "tasks[3].limits.max_tokens must be >= 0, got -3"},
			{"batch bad json", "/v1/tasks/batch", `{"tasks":[{"prompt":"a"},{"prompt":7}]}`, "tasks[1].prompt", "must be a JSON string"},
			{"batch empty", "/v1/tasks/batch", `{"tasks":[]}`, "tasks", "is empty"},
			{"batch one bad", "/v1/tasks/batch", api.BatchRequest{Tasks: []fleet.TaskSpec{{Profile: "openai"}}}, "tasks[0].prompt", "tasks[0].prompt is required"},
			{"batch duplicate key", "/v1/tasks/batch", api.BatchRequest{Tasks: []fleet.TaskSpec{{Prompt: "a", IdempotencyKey: "k"}, {Prompt: "b", IdempotencyKey: "k"}}},
				"tasks[1].idempotency_key", "also the key of tasks[0]"},
		}
		for _, c := range cases {
			code, detail, raw := b.rawCall(t, http.MethodPost, c.path, c.body, testToken)
			if code != http.StatusBadRequest || detail.Code != api.CodeInvalid || detail.Field != c.field || !strings.Contains(detail.Message, c.msg) {
				t.Errorf("%s: %d %s, want 400 with field %q and a message containing %q", c.name, code, raw, c.field, c.msg)
			}
		}
		if n := b.tasksInStream(t); n != 0 {
			t.Fatalf("TASKS holds %d messages after bad submissions, want 0", n)
		}
		if n := b.storedTasks(t); n != 0 {
			t.Fatalf("the store holds %d tasks after bad submissions, want 0", n)
		}
		for _, path := range []string{"/v1/tasks/not-a-uuid", "/v1/tasks?state=done", "/v1/tasks?limit=0", "/v1/tasks?created_after=yesterday"} {
			if code, d, raw := b.rawCall(t, http.MethodGet, path, nil, testToken); code != http.StatusBadRequest || d.Field == "" {
				t.Errorf("GET %s: %d %s, want 400 naming the parameter", path, code, raw)
			}
		}
	})
}

func TestAPIIdempotentSubmit(t *testing.T) {
	bothStores(t, func(t *testing.T, mk storeMaker) {
		b := setupAPI(t, mk)
		ctx := context.Background()
		spec := validSpec("bump the dependency")
		spec.IdempotencyKey = "bump-42"
		first, err := b.client.Submit(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		again, err := b.client.Submit(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		if !again.Existing || again.Task.ID != first.Task.ID || first.Existing {
			t.Fatalf("second submit %+v (existing %v), want the first task %s", again.Task.ID, again.Existing, first.Task.ID)
		}
		other := validSpec("other")
		other.IdempotencyKey = "other-1"
		br, err := b.client.SubmitBatch(ctx, []fleet.TaskSpec{spec, other})
		if err != nil {
			t.Fatal(err)
		}
		if !br.Tasks[0].Existing || br.Tasks[0].ID != first.Task.ID || br.Tasks[1].Existing {
			t.Fatalf("batch with a seen key answered %+v", br.Tasks)
		}
		if n := b.tasksInStream(t); n != 2 {
			t.Fatalf("TASKS holds %d messages, want 2 (each task enqueued once)", n)
		}
		if n := b.storedTasks(t); n != 2 {
			t.Fatalf("the store holds %d tasks, want 2", n)
		}
	})
}

func TestAPIAuth(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	for _, c := range []struct {
		path, token string
		code        int
	}{
		{"/v1/counts", "", http.StatusUnauthorized},
		{"/v1/counts", "wrong", http.StatusUnauthorized},
		{"/v1/counts", testToken, http.StatusOK},
		{"/v1/counts?access_token=" + testToken, "", http.StatusBadRequest}, // never a token in a URL
		{"/v1/counts?access_token=" + testToken, testToken, http.StatusBadRequest},
		{"/v1/nowhere", testToken, http.StatusNotFound},
		{"/healthz", "", http.StatusOK},
		{"/readyz", "", http.StatusOK},
		{"/metrics", "", http.StatusOK},
	} {
		code, _, raw := b.rawCall(t, http.MethodGet, c.path, nil, c.token)
		if code != c.code {
			t.Errorf("GET %s with token %q: %d %s, want %d", c.path, c.token, code, raw, c.code)
		}
	}
	code, d, _ := b.rawCall(t, http.MethodPost, "/v1/tasks", validSpec("p"), "")
	if code != http.StatusUnauthorized || !strings.Contains(d.Message, "AGENTFLEET_TOKEN") {
		t.Fatalf("submit without a token: %d %+v", code, d)
	}
	if n := b.tasksInStream(t); n != 0 {
		t.Fatalf("an unauthenticated submit enqueued %d messages", n)
	}
	anon, _ := client.New(b.srv.URL, "nope", nil)
	_, err := anon.Counts(context.Background())
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized {
		t.Fatalf("client with a wrong token: %v, want a 401 client.APIError", err)
	}
}

func TestAPIMetrics(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	if _, err := b.client.Submit(context.Background(), validSpec("p")); err != nil {
		t.Fatal(err)
	}
	_, _, raw := b.rawCall(t, http.MethodGet, "/metrics", nil, "")
	for _, want := range []string{
		`agentfleet_tasks{state="queued"} 1`,
		`agentfleet_dispatcher_tasks_submitted_total{result="created"} 1`,
		`agentfleet_api_request_duration_seconds_count{code="201",method="POST",route="POST /v1/tasks"} 1`,
		`agentfleet_dispatcher_queue_enqueued_total 1`,
	} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	st, err := b.client.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Counts[store.TaskQueued] != 1 || len(st.Queues) != 1 || st.Queues[0].Queue != fleet.DefaultQueue || st.Enqueued != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// A task submitted without limits gets the dispatcher's default limits,
// and a limit the spec sets is kept: no task runs without bound.
func TestSubmittedTasksGetDefaultLimits(t *testing.T) {
	b := setupAPI(t, sqliteStore)
	ctx := context.Background()
	bounded := validSpec("bounded")
	bounded.Limits.MaxTurns = 5
	for _, tt := range []struct {
		spec fleet.TaskSpec
		want fleet.Limits
	}{
		{validSpec("unbounded"), fleet.DefaultLimits},
		{bounded, fleet.Limits{MaxTurns: 5, WallTime: fleet.DefaultLimits.WallTime, MaxTokens: fleet.DefaultLimits.MaxTokens}},
	} {
		got, err := b.client.Submit(ctx, tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		view, err := b.client.Get(ctx, got.Task.ID)
		if err != nil {
			t.Fatal(err)
		}
		var stored fleet.TaskSpec
		if err := json.Unmarshal(view.Spec, &stored); err != nil || stored.Limits != tt.want {
			t.Fatalf("%q stored limits %+v (%v), want %+v", tt.spec.Prompt, stored.Limits, err, tt.want)
		}
	}
}
