package dispatcher_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/internal/giteatest"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// TestGiteaSendsLabelledIssue: the real Gitea, with a webhook to the
// dispatcher on loopback signed with its secret, sends the event of an
// issue labelled agentfleet; the dispatcher verifies it and submits one
// task for the issue, as the forge's webhook principal.
func TestGiteaSendsLabelledIssue(t *testing.T) {
	g := giteatest.Start(t)
	t.Setenv("TEST_GITEA_HOOK_SECRET", forgeSecret)
	f := fleettest.Start(t, fleettest.Options{NoWorkers: true, SQLite: true})
	d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{Logger: slog.New(slog.DiscardHandler), ScheduleInterval: -1,
		Policy: fleet.Policy{Repositories: fleet.Repositories{Allow: []string{g.URL}, AllowPrivate: []string{"127.0.0.1"}}},
		Forges: map[string]dispatcher.ForgeConfig{"gitea": {Kind: "gitea", SecretEnv: "TEST_GITEA_HOOK_SECRET", Tenant: "team-a",
			Spec: fleet.TaskSpec{Profile: "openai"}}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{Token: "t0k"}))
	t.Cleanup(srv.Close)

	g.API(t, "POST", "/user/repos", `{"name":"hello","auto_init":true,"default_branch":"main"}`, nil)
	repo := "/repos/" + giteatest.Admin + "/hello"
	g.API(t, "POST", repo+"/hooks", fmt.Sprintf(`{"type":"gitea","active":true,"events":["issues","issue_label","issue_comment"],
		"config":{"url":%q,"content_type":"json","secret":%q}}`, srv.URL+"/v1/forges/gitea/events", forgeSecret), nil)
	var label struct{ ID int }
	g.API(t, "POST", repo+"/labels", `{"name":"agentfleet","color":"#00aabb"}`, &label)
	var issue struct{ Number int }
	g.API(t, "POST", repo+"/issues", `{"title":"The greeting is rude","body":"It says go away."}`, &issue)
	g.API(t, "POST", fmt.Sprintf("%s/issues/%d/labels", repo, issue.Number), fmt.Sprintf(`{"labels":[%d]}`, label.ID), nil)

	var task store.Task
	testenv.EventuallyErr(t, fleettest.Wait, "Gitea's webhook to submit a task", func() error {
		page, err := f.Store.ListTasks(context.Background(), store.ListTasksParams{Labels: map[string]string{"forge": "gitea"}})
		if err != nil {
			return err
		}
		if len(page.Tasks) != 1 {
			return fmt.Errorf("%d tasks", len(page.Tasks))
		}
		task = page.Tasks[0]
		return nil
	})
	spec, _ := fleet.DecodeSpec(task.Spec)
	if task.Tenant != "team-a" || task.SubmittedBy != "webhook:gitea" || !strings.Contains(spec.Prompt, "It says go away.") ||
		!strings.HasPrefix(spec.Environment.Repo, g.URL) {
		t.Fatalf("task %+v with spec %+v", task, spec)
	}
}
