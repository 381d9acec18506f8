package dispatcher_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/delivery"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/dispatcher/webhook"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/giteatest"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// The README's contents the scripted agent writes in each round, and the
// line the base branch gets meanwhile.
const (
	readme1 = "Hello from the fleet.\n"
	readme2 = readme1 + "Tested.\n"
	readme3 = readme2 + "Say hello too.\n"
	mainHas = "Main moved.\n"
)

// TestGiteaFollowsThePullRequest is issue 34's done-when against the real
// Gitea, which sends its webhooks to the dispatcher on loopback while the
// test acts as the CI system and as a reviewer through Gitea's API:
// an issue labelled agentfleet produces a pull request that references
// it; a failing commit status on it (whose log the dispatcher reads
// through Gitea) produces a new commit on the same branch, and the
// status goes green; a review comment produces a follow-up commit; the
// base branch moved in conflict produces a branch rebased onto it; the
// merge marks the task merged, after which it takes no follow-up.
//
//nolint:maintidx // the done-when walked in order on one Gitea; each round builds on the branch the last left
func TestGiteaFollowsThePullRequest(t *testing.T) {
	g := giteatest.Start(t)
	t.Setenv("TEST_GITEA_HOOK_SECRET", forgeSecret)
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(g.Token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(g.URL, "http://")
	f := fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true, Worker: func(_ int, c *worker.Config) {
		c.Delivery.Tokens = map[string]delivery.Token{"gitea": {TokenFile: tok, Username: giteatest.Admin, Forge: "gitea",
			APIURL: g.URL + "/api/v1", Hosts: []string{host}}}
		c.Policy.Repositories.Allow = []string{g.URL + "/"}
		c.Policy.Repositories.AllowPrivate = []string{"127.0.0.0/8", "::1"}
		c.OutboundAllowPrivate = []string{"127.0.0.1"}
	}})
	template := fleet.TaskSpec{Profile: "anthropic",
		Delivery: &fleet.Delivery{Credentials: fleet.DeliveryCredentials{Token: "gitea"}, PullRequest: &fleet.PullRequest{}},
		Limits:   fleet.Limits{MaxFollowups: 5}}
	template.Checks = []fleet.Check{{Name: "greets", Command: "grep -q 'Hello from the fleet' README.md"}}
	d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{Logger: slog.New(slog.DiscardHandler), ScheduleInterval: -1,
		Policy:   fleet.Policy{Repositories: fleet.Repositories{Allow: []string{g.URL + "/"}, AllowPrivate: []string{"127.0.0.1"}}},
		Webhooks: webhook.Config{AllowPrivate: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		Forges: map[string]dispatcher.ForgeConfig{"gitea": {Kind: "gitea", SecretEnv: "TEST_GITEA_HOOK_SECRET",
			APIURL: g.URL + "/api/v1", TokenFile: tok, Triggers: dispatcher.ForgeTriggers{Collaborators: true}, Spec: template}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = d.Run(ctx) }()
	srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{Token: "t0k"}))
	t.Cleanup(func() { srv.Close(); stop(); <-ran })

	repo := "/repos/" + giteatest.Admin + "/hello"
	g.API(t, "POST", "/user/repos", `{"name":"hello","auto_init":true,"readme":"Default","default_branch":"main"}`, nil)
	// The CI's log, kept where its status's target_url points, on Gitea.
	g.API(t, "POST", repo+"/contents/ci.log", fmt.Sprintf(`{"content":%q,"new_branch":"ci-logs","message":"ci log"}`,
		base64.StdEncoding.EncodeToString([]byte("=== RUN TestReadme\n--- FAIL: TestReadme: the README does not say it was tested\n"))), nil)
	g.API(t, "POST", repo+"/hooks", fmt.Sprintf(`{"type":"gitea","active":true,"events":["issues","issue_comment","pull_request","status","push"],
		"config":{"url":%q,"content_type":"json","secret":%q}}`, srv.URL+"/v1/forges/gitea/events", forgeSecret), nil)
	var label struct{ ID int }
	g.API(t, "POST", repo+"/labels", `{"name":"agentfleet","color":"#00aabb"}`, &label)

	git := `git -c user.name=fleet -c user.email=fleet@example.invalid`
	body := fleettest.Prompt("Make the README greet",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(fmt.Sprintf("printf %q > README.md", readme1))}},
		fleettest.Step{Text: "Greet in the README\n\nThe README greets."},
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(fmt.Sprintf("printf %q > README.md", readme2))}},
		fleettest.Step{Text: "Say the README was tested\n\nFixed what CI said: {{last_user}}"},
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(fmt.Sprintf("printf %q > README.md", readme3))}},
		fleettest.Step{Text: "Say hello too\n\nAs the review asked."},
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(fmt.Sprintf(`%[1]s rebase origin/main >/dev/null 2>&1
for i in 1 2 3 4 5 6; do
  test -d .git/rebase-merge || test -d .git/rebase-apply || break
  printf %[2]q > README.md && git add README.md
  GIT_EDITOR=true %[1]s rebase --continue >/dev/null 2>&1 || true
done
test ! -d .git/rebase-merge && git merge-base --is-ancestor origin/main HEAD && echo rebased`, git, readme3+mainHas))}},
		fleettest.Step{Text: "Rebase onto main\n\nRebased."})
	var issue struct{ Number int }
	g.API(t, "POST", repo+"/issues", fmt.Sprintf(`{"title":"The README is rude","body":%q}`, body), &issue)
	g.API(t, "POST", fmt.Sprintf("%s/issues/%d/labels", repo, issue.Number), fmt.Sprintf(`{"labels":[%d]}`, label.ID), nil)

	// Round 1: the labelled issue's task opens a pull request referencing it.
	var id uuid.UUID
	testenv.EventuallyErr(t, fleettest.Wait, "the labelled issue to submit a task", func() error {
		page, err := f.Store.ListTasks(context.Background(), store.ListTasksParams{Labels: map[string]string{"forge": "gitea"}})
		if err != nil || len(page.Tasks) != 1 {
			return fmt.Errorf("%d tasks, %v", len(page.Tasks), err)
		}
		id = page.Tasks[0].ID
		return nil
	})
	d1 := roundDelivery(t, f, id, 1)
	type pull struct {
		Body      string `json:"body"`
		State     string `json:"state"`
		Merged    bool   `json:"merged"`
		Mergeable bool   `json:"mergeable"`
		MergeBase string `json:"merge_base"`
		Head      struct {
			Ref string `json:"ref"`
			Sha string `json:"sha"`
		} `json:"head"`
	}
	var pr pull
	g.API(t, "GET", fmt.Sprintf("%s/pulls/%d", repo, d1.RequestNumber), "", &pr)
	if pr.State != "open" || pr.Head.Sha != d1.Commit || !strings.Contains(pr.Body, fmt.Sprintf("Fixes #%d", issue.Number)) {
		t.Fatalf("pull request %+v, want open at %s referencing issue #%d", pr, d1.Commit, issue.Number)
	}

	// Round 2: CI fails on the pull request's commit.
	g.API(t, "POST", repo+"/statuses/"+d1.Commit, fmt.Sprintf(`{"state":"failure","context":"ci/readme","description":"the README test failed","target_url":%q}`,
		g.URL+"/"+giteatest.Admin+"/hello/raw/branch/ci-logs/ci.log"), nil)
	d2 := roundDelivery(t, f, id, 2)
	if d2.Branch != d1.Branch || d2.RequestNumber != d1.RequestNumber || d2.Commit == d1.Commit {
		t.Fatalf("round 2 delivered %+v after %+v: want a new commit on the same branch and pull request", d2, d1)
	}
	if in := lastInput(t, f, id); !strings.Contains(in, `"ci/readme" failed`) || !strings.Contains(in, "--- FAIL: TestReadme") {
		t.Errorf("the CI follow-up %q lacks the check's name or its log", in)
	}
	g.API(t, "POST", repo+"/statuses/"+d2.Commit, `{"state":"success","context":"ci/readme","description":"passed"}`, nil)
	var combined struct{ State string }
	g.API(t, "GET", repo+"/commits/"+d2.Commit+"/status", "", &combined)
	if combined.State != "success" {
		t.Errorf("the pull request's status is %q after the repair, want success", combined.State)
	}

	// Round 3: a reviewer comments on a line.
	g.API(t, "POST", fmt.Sprintf("%s/pulls/%d/reviews", repo, d1.RequestNumber),
		`{"event":"COMMENT","body":"Nearly.","comments":[{"path":"README.md","new_position":2,"body":"Say hello too."}]}`, nil)
	d3 := roundDelivery(t, f, id, 3)
	if d3.Branch != d1.Branch || d3.Commit == d2.Commit {
		t.Fatalf("round 3 delivered %+v", d3)
	}
	if in := lastInput(t, f, id); !strings.Contains(in, "README.md line 2") || !strings.Contains(in, "Say hello too.") {
		t.Errorf("the review follow-up %q lacks the comment with its file and line", in)
	}

	// Round 4: main moves in conflict with the branch.
	var file struct{ Sha string }
	g.API(t, "GET", repo+"/contents/README.md?ref=main", "", &file)
	g.API(t, "PUT", repo+"/contents/README.md", fmt.Sprintf(`{"branch":"main","sha":%q,"content":%q,"message":"main moves"}`,
		file.Sha, base64.StdEncoding.EncodeToString([]byte(mainHas))), nil)
	var mainHead struct {
		Commit struct{ ID string } `json:"commit"`
	}
	g.API(t, "GET", repo+"/branches/main", "", &mainHead)
	d4 := roundDelivery(t, f, id, 4)
	if d4.Branch != d1.Branch || d4.Commit == d3.Commit {
		t.Fatalf("round 4 delivered %+v", d4)
	}
	testenv.EventuallyErr(t, fleettest.Wait, "Gitea to find the rebased pull request mergeable", func() error {
		g.API(t, "GET", fmt.Sprintf("%s/pulls/%d", repo, d1.RequestNumber), "", &pr)
		if !pr.Mergeable || pr.MergeBase != mainHead.Commit.ID {
			return fmt.Errorf("mergeable %v, merge base %s (main at %s)", pr.Mergeable, pr.MergeBase, mainHead.Commit.ID)
		}
		return nil
	})

	// The merge marks the task merged; it takes no more follow-ups.
	g.API(t, "POST", fmt.Sprintf("%s/pulls/%d/merge", repo, d1.RequestNumber), `{"Do":"merge"}`, nil)
	testenv.EventuallyErr(t, fleettest.Wait, "the merge to mark the task", func() error {
		v := getTaskView(t, srv.URL, id)
		if v.Outcome != "merged" || v.State != store.TaskSucceeded {
			return fmt.Errorf("task %s, outcome %q", v.State, v.Outcome)
		}
		return nil
	})
	if _, err := d.Reopen(context.Background(), f.Task(id), "once more"); err == nil || !strings.Contains(err.Error(), "merged or closed") {
		t.Errorf("a follow-up of the merged task: %v, want refused", err)
	}
	page, err := f.Store.ListAudit(context.Background(), store.ListAuditParams{Principal: "webhook:gitea"})
	if err != nil {
		t.Fatal(err)
	}
	actions := map[string]int{}
	for _, e := range page.Entries {
		actions[e.Action]++
	}
	if actions["task.submit"] != 1 || actions["task.follow_up"] < 3 || actions["task.conclude"] != 1 {
		t.Errorf("audit of the forge's principal: %v", actions)
	}
}

// roundDelivery waits for round n of task id to end and returns its
// delivery, failing unless it succeeded and pushed.
func roundDelivery(t *testing.T, f *fleettest.Fleet, id uuid.UUID, n int) fleet.DeliveryResult {
	t.Helper()
	task := f.WaitFor(fmt.Sprintf("round %d to end", n), id, func(t store.Task) bool { return t.State.Terminal() && t.Attempts >= n })
	res := fleettest.Result(t, task)
	if task.State != store.TaskSucceeded || task.Attempts != n || res.Delivery == nil || !res.Delivery.Pushed || res.Delivery.RequestNumber == 0 {
		t.Fatalf("round %d: state %s (%s) after %d attempts: %s; delivery %+v", n, task.State, task.Error, task.Attempts, res.Error, res.Delivery)
	}
	return *res.Delivery
}

// lastInput is the newest stored input of task id.
func lastInput(t *testing.T, f *fleettest.Fleet, id uuid.UUID) string {
	t.Helper()
	ins := inputs(t, f, id)
	if len(ins) == 0 {
		t.Fatal("no stored input")
	}
	return ins[len(ins)-1]
}

// getTaskView reads GET /v1/tasks/{id}.
func getTaskView(t *testing.T, base string, id uuid.UUID) api.TaskView {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/v1/tasks/"+id.String(), nil)
	req.Header.Set("Authorization", "Bearer t0k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var v api.TaskView
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
