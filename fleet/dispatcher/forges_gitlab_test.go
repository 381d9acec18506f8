package dispatcher_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/dispatcher/webhook"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/store"
)

// restServer answers GET requests by their request URI (as sent,
// escapes included) and records them; any other request is a 404.
type restServer struct {
	*httptest.Server
	mu     sync.Mutex
	seen   []string
	header http.Header
}

func newRESTServer(t *testing.T, answers map[string]string) *restServer {
	s := &restServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.RequestURI)
		s.header = r.Header.Clone()
		s.mu.Unlock()
		a, ok := answers[r.RequestURI]
		if !ok || r.Method != http.MethodGet {
			http.Error(w, `{"message":"404 Not found"}`, http.StatusNotFound)
			return
		}
		if strings.HasPrefix(a, "[") || strings.HasPrefix(a, "{") {
			w.Header().Set("Content-Type", "application/json")
		}
		_, _ = w.Write([]byte(a))
	}))
	t.Cleanup(s.Close)
	return s
}

// endRound moves task id through a run that delivered result, as a
// worker would.
func endRound(t *testing.T, f *fleettest.Fleet, id uuid.UUID, result string) {
	t.Helper()
	ctx := context.Background()
	if _, err := f.Store.ClaimTask(ctx, store.ClaimTaskParams{ID: id, WorkerID: "w1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.TransitionTask(ctx, store.TransitionTaskParams{ID: id, From: store.TaskRunning, To: store.TaskSucceeded,
		WorkerID: "w1", Result: json.RawMessage(result)}); err != nil {
		t.Fatal(err)
	}
}

// postGitLab posts a GitLab webhook as GitLab sends it: X-Gitlab-Event,
// the secret token as X-Gitlab-Token, an Idempotency-Key.
func postGitLab(t *testing.T, url, event, key string, payload any, token string) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(payload)
	headers := map[string]string{"X-Gitlab-Event": event, "X-Gitlab-Event-UUID": "ev-" + key, "Idempotency-Key": key}
	if token != "" {
		headers["X-Gitlab-Token"] = token
	}
	return postHook(t, url, body, headers)
}

// gitlabProject is the project object of GitLab's webhook payloads.
var gitlabProject = map[string]any{"id": 15, "name": "Proj", "web_url": "http://gitlab.example/g/p",
	"git_ssh_url": "git@gitlab.example:g/p.git", "git_http_url": "http://gitlab.example/g/p.git",
	"namespace": "g", "path_with_namespace": "g/p", "default_branch": "main"}

func gitlabUser(id int, username string) map[string]any {
	return map[string]any{"id": id, "name": username, "username": username, "avatar_url": "", "email": "[REDACTED]"}
}

// TestGitLabWebhooks posts GitLab's hooks, shaped as
// docs.gitlab.com/user/project/integrations/webhook_events documents
// them, to a GitLab forge whose REST API is a local server: the token
// is checked; an Issue Hook opening an issue labelled agentfleet by a
// Developer submits a task, a label added by a Reporter is refused
// (collaborators rule, through the members API); a Note Hook mentioning
// the fleet on the merge request follows its task up, once per
// Idempotency-Key; a failed Pipeline Hook brings the failed job's name
// and the end of its trace, and one for an older commit is ignored; a
// reviewer requesting changes brings the unresolved diff notes with
// their file and line; a merge request GitLab finds in conflict brings a
// rebase follow-up; a Merge Request Hook "merge" records the outcome and
// ends the follow-ups.
//
//nolint:maintidx // one merge request followed in order over one fleet; split, each part would replay the rounds before it
func TestGitLabWebhooks(t *testing.T) {
	t.Setenv("TEST_GITLAB_SECRET", forgeSecret)
	t.Setenv("TEST_GITLAB_TOKEN", "glpat-test")
	api := newRESTServer(t, map[string]string{
		"/api/v4/projects/g%2Fp/merge_requests/12": `{"id":7,"iid":12,"state":"opened","target_branch":"main","source_branch":"agentfleet/x","sha":"abc","has_conflicts":true,"detailed_merge_status":"conflict"}`,
		"/api/v4/projects/g%2Fp/members/all/6":     `{"id":6,"username":"dev","access_level":30}`,
		"/api/v4/projects/g%2Fp/members/all/5":     `{"id":5,"username":"rep","access_level":20}`,
		"/api/v4/projects/g%2Fp/jobs/380/trace":    "$ go test ./...\n--- FAIL: TestGreeting (0.00s)\n    greet_test.go:9: got \"go away\"\nFAIL\n",
		"/api/v4/projects/g%2Fp/merge_requests/12/notes?per_page=100&sort=asc": `[
			{"id":301,"type":"DiffNote","body":"Use a constant here.","resolvable":true,"resolved":false,
			 "position":{"base_sha":"a","start_sha":"a","head_sha":"abc","old_path":"greet.go","new_path":"greet.go","position_type":"text","old_line":null,"new_line":18}},
			{"id":302,"type":null,"body":"Thanks!","resolvable":false}]`,
	})
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true, SQLite: true})
	d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{Logger: slog.New(slog.DiscardHandler), ScheduleInterval: -1,
		Policy:   fleet.Policy{Repositories: fleet.Repositories{AllowLocal: []string{os.TempDir()}, Allow: []string{"http://gitlab.example/"}}},
		Webhooks: webhook.Config{AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		Forges: map[string]dispatcher.ForgeConfig{"gl": {Kind: "gitlab", SecretEnv: "TEST_GITLAB_SECRET", APIURL: api.URL + "/api/v4",
			TokenEnv: "TEST_GITLAB_TOKEN", Triggers: dispatcher.ForgeTriggers{Collaborators: true}, Spec: fleet.TaskSpec{Profile: "openai"}}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{Token: "t0k"}))
	t.Cleanup(srv.Close)
	url := srv.URL + "/v1/forges/gl/events"

	issue := map[string]any{"object_kind": "issue", "event_type": "issue", "user": gitlabUser(6, "dev"), "project": gitlabProject,
		"object_attributes": map[string]any{"id": 301, "iid": 23, "title": "The greeting is rude", "description": "It says go away.",
			"state": "opened", "action": "open"},
		"labels": []any{map[string]any{"id": 206, "title": "agentfleet", "type": "ProjectLabel"}}}
	for _, token := range []string{"", "wrong"} {
		if code, _ := postGitLab(t, url, "Issue Hook", "k1", issue, token); code != http.StatusUnauthorized {
			t.Fatalf("token %q: %d, want 401", token, code)
		}
	}
	code, out := postGitLab(t, url, "Issue Hook", "k1", issue, forgeSecret)
	if code != http.StatusCreated || out["action"] != "task.submit" {
		t.Fatalf("an issue opened with the label: %d %v", code, out)
	}
	id := uuid.MustParse(out["task_id"].(string))
	spec, _ := fleet.DecodeSpec(taskByID(t, f, id.String()).Spec)
	if !strings.Contains(spec.Prompt, "It says go away.") || spec.Environment.Repo != "http://gitlab.example/g/p.git" {
		t.Fatalf("spec %+v", spec)
	}
	labelled := map[string]any{"object_kind": "issue", "user": gitlabUser(5, "rep"), "project": gitlabProject,
		"object_attributes": map[string]any{"iid": 24, "title": "Another", "description": "d", "action": "update", "state": "opened"},
		"labels":            []any{map[string]any{"title": "agentfleet"}},
		"changes":           map[string]any{"labels": map[string]any{"previous": []any{}, "current": []any{map[string]any{"title": "agentfleet"}}}}}
	if code, out := postGitLab(t, url, "Issue Hook", "k2", labelled, forgeSecret); code != http.StatusAccepted || out["ignored"] != true ||
		!strings.Contains(out["reason"].(string), "rep may not trigger") {
		t.Fatalf("a Reporter's label: %d %v, want refused", code, out)
	}

	endRound(t, f, id, `{"success":true,"delivery":{"branch":"agentfleet/x","commit":"abc","pushed":true,"request_number":12}}`)
	note := map[string]any{"object_kind": "note", "event_type": "note", "user": gitlabUser(6, "dev"), "project_id": 15, "project": gitlabProject,
		"object_attributes": map[string]any{"id": 1244, "note": "/agentfleet also greet the moon", "noteable_type": "MergeRequest", "action": "create"}, //nolint:misspell // GitLab's name
		"merge_request":     map[string]any{"id": 7, "iid": 12, "source_branch": "agentfleet/x", "target_branch": "main", "state": "opened"}}
	if code, out := postGitLab(t, url, "Note Hook", "k3", note, forgeSecret); code != http.StatusAccepted || out["action"] != "task.follow_up" {
		t.Fatalf("a mention on the merge request: %d %v", code, out)
	}
	endRound(t, f, id, `{"success":true,"delivery":{"branch":"agentfleet/x","commit":"abc","pushed":true,"request_number":12}}`)
	if code, out := postGitLab(t, url, "Note Hook", "k3", note, forgeSecret); code != http.StatusOK || out["action"] != "task.follow_up" {
		t.Fatalf("the same note again: %d %v, want 200 (acted on already)", code, out)
	}
	if ins := inputs(t, f, id); len(ins) != 1 || ins[0] != "also greet the moon" || taskByID(t, f, id.String()).State != store.TaskSucceeded {
		t.Fatalf("inputs after a redelivery: %q", ins)
	}

	pipeline := func(sha string) map[string]any {
		return map[string]any{"object_kind": "pipeline", "user": gitlabUser(6, "dev"), "project": gitlabProject,
			"object_attributes": map[string]any{"id": 31, "iid": 3, "ref": "agentfleet/x", "sha": sha, "status": "failed",
				"detailed_status": "failed", "stages": []any{"test"}},
			"merge_request": map[string]any{"id": 7, "iid": 12, "source_branch": "agentfleet/x", "target_branch": "main"},
			"builds": []any{
				map[string]any{"id": 379, "stage": "build", "name": "build", "status": "success"},
				map[string]any{"id": 380, "stage": "test", "name": "unit tests", "status": "failed", "failure_reason": "script_failure"}}}
	}
	if code, out := postGitLab(t, url, "Pipeline Hook", "k4", pipeline("0ld"), forgeSecret); code != http.StatusAccepted || out["ignored"] != true {
		t.Fatalf("a pipeline of an older commit: %d %v, want ignored", code, out)
	}
	if code, out := postGitLab(t, url, "Pipeline Hook", "k5", pipeline("abc"), forgeSecret); code != http.StatusAccepted || out["action"] != "task.follow_up" {
		t.Fatalf("a failed pipeline: %d %v", code, out)
	}
	if in := lastInput(t, f, id); !strings.Contains(in, `"unit tests" failed`) || !strings.Contains(in, "script_failure") ||
		!strings.Contains(in, `greet_test.go:9: got "go away"`) {
		t.Errorf("the pipeline's follow-up %q lacks the job, its reason or its trace", in)
	}
	endRound(t, f, id, `{"success":true,"delivery":{"branch":"agentfleet/x","commit":"abc","pushed":true,"request_number":12}}`)

	review := map[string]any{"object_kind": "merge_request", "event_type": "merge_request", "user": gitlabUser(6, "dev"), "project": gitlabProject,
		"object_attributes": map[string]any{"iid": 12, "action": "update", "state": "opened", "source_branch": "agentfleet/x", "target_branch": "main",
			"detailed_merge_status": "mergeable"},
		"reviewers": []any{map[string]any{"id": 6, "username": "dev", "state": "requested_changes", "re_requested": false}},
		"changes": map[string]any{"reviewers": map[string]any{
			"previous": []any{map[string]any{"id": 6, "username": "dev", "state": "unreviewed"}},
			"current":  []any{map[string]any{"id": 6, "username": "dev", "state": "requested_changes"}}}}}
	if code, out := postGitLab(t, url, "Merge Request Hook", "k6", review, forgeSecret); code != http.StatusAccepted || out["action"] != "task.follow_up" {
		t.Fatalf("changes requested: %d %v", code, out)
	}
	if in := lastInput(t, f, id); !strings.Contains(in, "greet.go line 18:\nUse a constant here.") || strings.Contains(in, "Thanks!") {
		t.Errorf("the review's follow-up %q", in)
	}
	endRound(t, f, id, `{"success":true,"delivery":{"branch":"agentfleet/x","commit":"abc","pushed":true,"request_number":12}}`)

	conflict := map[string]any{"object_kind": "merge_request", "user": gitlabUser(6, "dev"), "project": gitlabProject,
		"object_attributes": map[string]any{"iid": 12, "action": "update", "state": "opened", "source_branch": "agentfleet/x", "target_branch": "main",
			"merge_status": "cannot_be_merged", "detailed_merge_status": "conflict"}}
	if code, out := postGitLab(t, url, "Merge Request Hook", "k9", conflict, forgeSecret); code != http.StatusAccepted || out["action"] != "task.follow_up" {
		t.Fatalf("a merge request in conflict: %d %v", code, out)
	}
	if in := lastInput(t, f, id); !strings.Contains(in, "git rebase origin/main") {
		t.Errorf("the conflict's follow-up %q", in)
	}
	endRound(t, f, id, `{"success":true,"delivery":{"branch":"agentfleet/x","commit":"abc","pushed":true,"request_number":12}}`)

	merged := map[string]any{"object_kind": "merge_request", "user": gitlabUser(6, "dev"), "project": gitlabProject,
		"object_attributes": map[string]any{"iid": 12, "action": "merge", "state": "merged", "source_branch": "agentfleet/x", "target_branch": "main"}}
	if code, out := postGitLab(t, url, "Merge Request Hook", "k7", merged, forgeSecret); code != http.StatusOK || out["action"] != "task.conclude" {
		t.Fatalf("merged: %d %v", code, out)
	}
	if v := getTaskView(t, srv.URL, id); v.Outcome != "merged" || v.State != store.TaskSucceeded {
		t.Fatalf("the merged task: %s, outcome %q", v.State, v.Outcome)
	}
	note["object_attributes"].(map[string]any)["note"] = "/agentfleet one more thing"
	if code, out := postGitLab(t, url, "Note Hook", "k8", note, forgeSecret); code != http.StatusAccepted || out["ignored"] != true {
		t.Fatalf("a mention after the merge: %d %v, want ignored", code, out)
	}
	if api.header.Get("Private-Token") != "glpat-test" {
		t.Errorf("the REST calls carried Private-Token %q", api.header.Get("Private-Token"))
	}
	page, err := f.Store.ListAudit(context.Background(), store.ListAuditParams{Principal: "webhook:gl"})
	if err != nil {
		t.Fatal(err)
	}
	var refused int
	for _, e := range page.Entries {
		if e.Action == "forge.refused" && e.Target == "rep" {
			refused++
		}
	}
	if refused != 1 {
		t.Errorf("audit %+v: want the refused Reporter once", page.Entries)
	}
}
