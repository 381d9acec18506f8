package dispatcher_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
)

// postGitea posts a Gitea webhook as Gitea sends it: X-Gitea-Event,
// X-Gitea-Delivery and the bare hex HMAC-SHA256 as X-Gitea-Signature.
func postGitea(t *testing.T, url, event, delivery string, payload any, secret string) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(payload)
	return postHook(t, url, body, map[string]string{"X-Gitea-Event": event, "X-Gitea-Delivery": delivery,
		"X-Gitea-Signature": hmacHex(secret, body)})
}

// TestForgeIssueCommentStartsTask: a comment addressed to the fleet
// ("/agentfleet fix the typo") on an issue, not a pull request, is a new
// task on each kind of forge (GitHub's issue_comment, Gitea's, GitLab's
// Note Hook on an Issue): answered 201 with the action task.submit, one
// task of the forge's tenant labelled with the forge, the repository
// and the issue, whose prompt has the issue and the comment's request.
// The same delivery again answers 200 with that task and creates none;
// a comment without the mention is ignored and creates none.
func TestForgeIssueCommentStartsTask(t *testing.T) {
	t.Setenv("TEST_FORGE_SECRET", forgeSecret)
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true, SQLite: true})
	d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{Logger: slog.New(slog.DiscardHandler), ScheduleInterval: -1,
		Policy: fleet.Policy{Repositories: fleet.Repositories{AllowLocal: []string{os.TempDir()}, Allow: []string{"http://gitlab.example/"}}},
		Forges: map[string]dispatcher.ForgeConfig{
			"gh": {Kind: "github", SecretEnv: "TEST_FORGE_SECRET", Tenant: "team-a", Spec: fleet.TaskSpec{Profile: "openai"}},
			"gt": {Kind: "gitea", SecretEnv: "TEST_FORGE_SECRET", Tenant: "team-a", Spec: fleet.TaskSpec{Profile: "openai"}},
			"gl": {Kind: "gitlab", SecretEnv: "TEST_FORGE_SECRET", Tenant: "team-a", Spec: fleet.TaskSpec{Profile: "openai"}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{Token: "t0k"}))
	t.Cleanup(srv.Close)

	ghComment := func(repo, body string) map[string]any {
		return map[string]any{"action": "created", "comment": map[string]any{"id": 1, "body": body},
			"issue":      map[string]any{"number": 5, "title": "Typo in the README", "body": "It says hullo.", "pull_request": nil},
			"repository": map[string]any{"full_name": "octo/hello", "clone_url": repo}, "sender": map[string]any{"login": "octocat"}}
	}
	glNote := func(body string) map[string]any {
		return map[string]any{"object_kind": "note", "event_type": "note", "user": gitlabUser(6, "dev"), "project_id": 15, "project": gitlabProject,
			"object_attributes": map[string]any{"id": 1245, "note": body, "noteable_type": "Issue", "action": "create"}, //nolint:misspell // GitLab's name
			"issue":             map[string]any{"id": 92, "iid": 5, "title": "Typo in the README", "description": "It says hullo.", "state": "opened"}}
	}
	ghRepo, gtRepo := t.TempDir(), t.TempDir()
	for _, c := range []struct {
		forge, repo string
		post        func(delivery string, payload any) (int, map[string]any)
		event       func(body string) map[string]any
	}{
		{forge: "gh", repo: "octo/hello",
			post: func(dl string, p any) (int, map[string]any) {
				return postEvent(t, srv.URL+"/v1/forges/gh/events", "issue_comment", dl, p, forgeSecret)
			},
			event: func(body string) map[string]any { return ghComment(ghRepo, body) }},
		{forge: "gt", repo: "octo/hello",
			post: func(dl string, p any) (int, map[string]any) {
				return postGitea(t, srv.URL+"/v1/forges/gt/events", "issue_comment", dl, p, forgeSecret)
			},
			event: func(body string) map[string]any { return ghComment(gtRepo, body) }},
		{forge: "gl", repo: "g/p",
			post: func(dl string, p any) (int, map[string]any) {
				return postGitLab(t, srv.URL+"/v1/forges/gl/events", "Note Hook", dl, p, forgeSecret)
			},
			event: glNote},
	} {
		before := len(mustList(t, f))
		if code, out := c.post(c.forge+"-plain", c.event("Thanks, /agentfleet fix the typo")); code != http.StatusAccepted || out["ignored"] != true {
			t.Fatalf("%s: a comment without the mention: %d %v, want ignored", c.forge, code, out)
		}
		if n := len(mustList(t, f)); n != before {
			t.Fatalf("%s: a comment without the mention made %d tasks", c.forge, n-before)
		}
		code, out := c.post(c.forge+"-1", c.event("/agentfleet fix the typo"))
		if code != http.StatusCreated || out["action"] != "task.submit" {
			t.Fatalf("%s: a mention on an issue: %d %v, want 201 task.submit", c.forge, code, out)
		}
		id, _ := out["task_id"].(string)
		if code, again := c.post(c.forge+"-1", c.event("/agentfleet fix the typo")); code != http.StatusOK || again["task_id"] != id {
			t.Fatalf("%s: the same delivery again: %d %v, want 200 with task %s", c.forge, code, again, id)
		}
		if n := len(mustList(t, f)); n != before+1 {
			t.Fatalf("%s: %d tasks made, want 1", c.forge, n-before)
		}
		task := taskByID(t, f, id)
		spec, _ := fleet.DecodeSpec(task.Spec)
		if task.Tenant != "team-a" || task.SubmittedBy != "webhook:"+c.forge {
			t.Errorf("%s: task of tenant %q by %q", c.forge, task.Tenant, task.SubmittedBy)
		}
		if l := task.Labels; l["forge"] != c.forge || l["forge_repo"] != c.repo || l["forge_issue"] != "5" {
			t.Errorf("%s: labels %v", c.forge, l)
		}
		if !strings.Contains(spec.Prompt, "Typo in the README") || !strings.Contains(spec.Prompt, "It says hullo.") ||
			!strings.HasSuffix(spec.Prompt, "\n\nfix the typo") || strings.Contains(spec.Prompt, "/agentfleet") {
			t.Errorf("%s: prompt %q, want the issue and the comment's request without the mention", c.forge, spec.Prompt)
		}
	}
}
