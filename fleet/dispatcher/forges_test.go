package dispatcher_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/store"
)

// forgeSecret is the webhook secret of the tests' forge, given to the
// dispatcher by an environment variable's name.
const forgeSecret = "s3cret"

// TestForgeWebhooks posts GitHub-shaped webhooks (documented payloads of
// the issues and issue_comment events) signed as GitHub signs them: a bad
// signature is refused; an issue labelled agentfleet becomes a task of
// the forge's tenant, submitted by its webhook principal, once per
// delivery; another label is ignored; a /agentfleet comment on the pull
// request the task opened reopens the ended task with the comment; both
// actions are in the audit log.
func TestForgeWebhooks(t *testing.T) {
	t.Setenv("TEST_FORGE_SECRET", forgeSecret)
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true, SQLite: true})
	d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{Logger: slog.New(slog.DiscardHandler), ScheduleInterval: -1,
		Policy: fleet.Policy{Repositories: fleet.Repositories{AllowLocal: []string{os.TempDir()}}},
		Forges: map[string]dispatcher.ForgeConfig{"gh": {Kind: "github", SecretEnv: "TEST_FORGE_SECRET", Tenant: "team-a",
			Spec: fleet.TaskSpec{Profile: "openai"}}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{Token: "t0k"}))
	t.Cleanup(srv.Close)
	repo := t.TempDir()
	issue := map[string]any{"action": "labeled", "label": map[string]any{"name": "agentfleet"},
		"issue":      map[string]any{"number": 3, "title": "The greeting is rude", "body": "It says go away."},
		"repository": map[string]any{"full_name": "octo/hello", "clone_url": repo}}

	if code, _ := postEvent(t, srv.URL+"/v1/forges/gh/events", "issues", "d1", issue, "wrong"); code != http.StatusUnauthorized {
		t.Fatalf("a bad signature: %d, want 401", code)
	}
	code, out := postEvent(t, srv.URL+"/v1/forges/gh/events", "issues", "d1", issue, forgeSecret)
	if code != http.StatusCreated || out["action"] != "task.submit" {
		t.Fatalf("labelled issue: %d %v", code, out)
	}
	id := out["task_id"].(string)
	if code, again := postEvent(t, srv.URL+"/v1/forges/gh/events", "issues", "d1", issue, forgeSecret); code != http.StatusOK || again["task_id"] != id {
		t.Fatalf("the same delivery again: %d %v, want the task %s", code, again, id)
	}
	task := taskByID(t, f, id)
	spec, _ := fleet.DecodeSpec(task.Spec)
	if task.Tenant != "team-a" || task.SubmittedBy != "webhook:gh" || !strings.Contains(spec.Prompt, "The greeting is rude") ||
		spec.Environment.Repo != repo || task.Labels["forge_issue"] != "3" {
		t.Fatalf("task %+v, spec %+v", task, spec)
	}
	issue["label"] = map[string]any{"name": "bug"}
	if code, out := postEvent(t, srv.URL+"/v1/forges/gh/events", "issues", "d2", issue, forgeSecret); code != http.StatusAccepted || out["ignored"] != true {
		t.Fatalf("another label: %d %v, want ignored", code, out)
	}

	// The task ran and opened pull request 7.
	ctx := context.Background()
	if _, err := f.Store.ClaimTask(ctx, store.ClaimTaskParams{ID: task.ID, WorkerID: "w1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.TransitionTask(ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskRunning, To: store.TaskSucceeded,
		WorkerID: "w1", Result: json.RawMessage(`{"success":true,"delivery":{"branch":"agentfleet/x","pushed":true,"request_number":7}}`)}); err != nil {
		t.Fatal(err)
	}
	comment := map[string]any{"action": "created", "comment": map[string]any{"body": "/agentfleet also greet the moon"},
		"issue":      map[string]any{"number": 7, "title": "Fix the greeting", "pull_request": map[string]any{"url": "https://api.github.com/repos/octo/hello/pulls/7"}},
		"repository": map[string]any{"full_name": "octo/hello", "clone_url": repo}}
	code, out = postEvent(t, srv.URL+"/v1/forges/gh/events", "issue_comment", "d3", comment, forgeSecret)
	if code != http.StatusAccepted || out["action"] != "task.follow_up" || out["task_id"] != id {
		t.Fatalf("a comment on the pull request: %d %v", code, out)
	}
	if got := taskByID(t, f, id); got.State != store.TaskQueued {
		t.Fatalf("the followed-up task is %s, want queued", got.State)
	}
	if ins := inputs(t, f, task.ID); len(ins) != 1 || ins[0] != "also greet the moon" {
		t.Fatalf("stored inputs %q", ins)
	}

	// Round 2 ended; the forge's CI fails on the pull request.
	if _, err := f.Store.ClaimTask(ctx, store.ClaimTaskParams{ID: task.ID, WorkerID: "w1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.TransitionTask(ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskRunning, To: store.TaskSucceeded,
		WorkerID: "w1", Result: json.RawMessage(`{"success":true,"delivery":{"branch":"agentfleet/x","pushed":true,"request_number":7}}`)}); err != nil {
		t.Fatal(err)
	}
	check := map[string]any{"action": "completed", "check_run": map[string]any{"name": "unit tests", "conclusion": "failure",
		"output": map[string]any{"title": "2 tests failed", "summary": "TestGreeting: got hello"}, "pull_requests": []any{map[string]any{"number": 7}}},
		"repository": map[string]any{"full_name": "octo/hello", "clone_url": repo}}
	code, out = postEvent(t, srv.URL+"/v1/forges/gh/events", "check_run", "d4", check, forgeSecret)
	if code != http.StatusAccepted || out["action"] != "task.follow_up" || taskByID(t, f, id).State != store.TaskQueued {
		t.Fatalf("a failed check run: %d %v", code, out)
	}
	ins := inputs(t, f, task.ID)
	if last := ins[len(ins)-1]; !strings.Contains(last, `"unit tests" failed`) || !strings.Contains(last, "TestGreeting: got hello") {
		t.Fatalf("the check's follow-up %q", last)
	}
	page, err := f.Store.ListAudit(ctx, store.ListAuditParams{Principal: "webhook:gh"})
	if err != nil || len(page.Entries) != 4 { // two submissions (one existing) and two follow-ups
		t.Fatalf("audit %+v, %v", page.Entries, err)
	}
}

// inputs returns the contents of a task's stored inputs, oldest first.
func inputs(t *testing.T, f *fleettest.Fleet, id uuid.UUID) []string {
	t.Helper()
	ctx := context.Background()
	arts, err := f.Store.ListArtifacts(ctx, store.ListArtifactsParams{TaskID: id})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range arts {
		if a.Kind != "input" {
			continue
		}
		full, err := f.Store.GetArtifact(ctx, store.GetArtifactParams{TaskID: id, Kind: a.Kind, Name: a.Name})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(full.Content))
	}
	return out
}

func taskByID(t *testing.T, f *fleettest.Fleet, id string) store.Task {
	t.Helper()
	for _, task := range mustList(t, f) {
		if task.ID.String() == id {
			return task
		}
	}
	t.Fatalf("no task %s", id)
	return store.Task{}
}

func mustList(t *testing.T, f *fleettest.Fleet) []store.Task {
	t.Helper()
	page, err := f.Store.ListTasks(context.Background(), store.ListTasksParams{})
	if err != nil {
		t.Fatal(err)
	}
	return page.Tasks
}

// postEvent posts a GitHub webhook signed with secret and decodes the answer.
func postEvent(t *testing.T, url, event, delivery string, payload any, secret string) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(payload)
	return postHook(t, url, body, map[string]string{"X-GitHub-Event": event, "X-GitHub-Delivery": delivery,
		"X-Hub-Signature-256": "sha256=" + hmacHex(secret, body)})
}

// hmacHex is the hex HMAC-SHA256 of body under secret, as forges sign.
func hmacHex(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// postHook posts a webhook's JSON body with headers and decodes the
// answer.
func postHook(t *testing.T, url string, body []byte, headers map[string]string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestForgeWebhookGiteaSignature: a Gitea forge's events carry
// X-Gitea-Signature (bare hex) and X-Gitea-Event; a GitHub-style
// signature header is not accepted for it, and a forge whose secret is
// not set refuses every event.
func TestForgeWebhookGiteaSignature(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(forgeSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true, SQLite: true})
	d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{Logger: slog.New(slog.DiscardHandler), ScheduleInterval: -1,
		Policy: fleet.Policy{Repositories: fleet.Repositories{AllowLocal: []string{os.TempDir()}}},
		Forges: map[string]dispatcher.ForgeConfig{
			"gt":    {Kind: "gitea", SecretFile: secret, Spec: fleet.TaskSpec{Profile: "openai"}},
			"unset": {Kind: "gitea", SecretEnv: "TEST_FORGE_UNSET_SECRET"},
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{Token: "t0k"}))
	t.Cleanup(srv.Close)
	body, _ := json.Marshal(map[string]any{"action": "labeled", "label": map[string]any{"name": "agentfleet"},
		"issue":      map[string]any{"number": 1, "title": "t", "body": "b"},
		"repository": map[string]any{"full_name": "o/r", "clone_url": t.TempDir()}})
	sig := hmacHex(forgeSecret, body)
	post := func(forge string, hdr map[string]string) int {
		code, _ := postHook(t, srv.URL+"/v1/forges/"+forge+"/events", body, hdr)
		return code
	}
	if code := post("gt", map[string]string{"X-Gitea-Event": "issues", "X-Hub-Signature-256": "sha256=" + sig}); code != http.StatusUnauthorized {
		t.Errorf("a GitHub header on a Gitea forge: %d, want 401", code)
	}
	if code := post("gt", map[string]string{"X-Gitea-Event": "issues", "X-Gitea-Delivery": "g1", "X-Gitea-Signature": sig}); code != http.StatusCreated {
		t.Errorf("a signed Gitea event: %d, want 201", code)
	}
	if code := post("unset", map[string]string{"X-Gitea-Event": "issues", "X-Gitea-Signature": sig}); code != http.StatusServiceUnavailable {
		t.Errorf("a forge without its secret: %d, want 503", code)
	}
	if code := post("nope", nil); code != http.StatusNotFound {
		t.Errorf("an unknown forge: %d, want 404", code)
	}
}
