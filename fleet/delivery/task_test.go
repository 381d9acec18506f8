package delivery_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/delivery"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/store"
)

type step = fleettest.Step

// fixSpec is a task that fixes greeting.txt in a clone of repo, checked by
// a check, and delivered.
func fixSpec(repo string, d *fleet.Delivery) fleet.TaskSpec {
	spec := fleettest.Spec("fix the greeting",
		step{Calls: []fleettest.Call{fleettest.Shell("echo 'hello, world' > greeting.txt")}},
		step{Text: "Fix the greeting\n\ngreeting.txt now greets the world."})
	spec.Environment = fleet.Environment{Repo: repo}
	spec.Checks = []fleet.Check{{Name: "greets", Command: "grep -q world greeting.txt"}}
	spec.Delivery = d
	return spec
}

// TestTaskChecksThenDeliversPullRequest: a task fixes a file, passes its
// check, pushes its branch to the repository it cloned and opens the pull
// request; the result records all of it and the diff is stored.
func TestTaskChecksThenDeliversPullRequest(t *testing.T) {
	bare := newOrigin(t)
	gh := newGitHubFake(t)
	tok := tokenFile(t, "ghp_test")
	f := fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true, Worker: func(_ int, c *worker.Config) {
		c.Delivery = delivery.Config{TaskURL: "https://fleet.example/#/tasks/{task_id}",
			Tokens: map[string]delivery.Token{"gh": {TokenFile: tok, Forge: "github", APIURL: gh.srv.URL}}}
		c.OutboundAllowPrivate = []string{"127.0.0.1"} // the fake forge is on loopback
	}})
	id := f.Submit(fixSpec(bare, &fleet.Delivery{Credentials: fleet.DeliveryCredentials{Token: "gh"},
		PullRequest: &fleet.PullRequest{Repo: "octo/hello", Labels: nil}}))
	task := f.WaitDone(id)
	res := fleettest.Result(t, task)
	if task.State != store.TaskSucceeded {
		t.Fatalf("state %s (%s): %s", task.State, task.Error, res.Error)
	}
	d := res.Delivery
	if d == nil || !d.Pushed || d.RequestNumber != 1 || d.Branch != "agentfleet/"+id.String() {
		t.Fatalf("delivery %+v", d)
	}
	if got := git(t, bare, "show", d.Commit+":greeting.txt"); got != "hello, world" {
		t.Errorf("pushed greeting.txt = %q", got)
	}
	pulls, _ := gh.created()
	body := pulls[0]["body"].(string)
	for _, want := range []string{"greets the world", "### Checks: passed", "| `greets` | after 0 | passed", "https://fleet.example/#/tasks/" + id.String()} {
		if !strings.Contains(body, want) {
			t.Errorf("pull request body lacks %q:\n%s", want, body)
		}
	}
	diff, err := f.Store.GetArtifact(context.Background(), store.GetArtifactParams{TaskID: id, Kind: "diff"})
	if err != nil || !strings.Contains(string(diff.Content), "+hello, world") {
		t.Errorf("diff artifact %q, %v", diff.Content, err)
	}
	has, err := f.Queue.HasEvent(context.Background(), task.RootID.String(), id.String(), "DELIVERY")
	if err != nil || !has {
		t.Errorf("no DELIVERY event (%v)", err)
	}
}

// TestTaskUnknownCredentials: a token reference the worker does not hold
// fails the task before its session costs anything.
func TestTaskUnknownCredentials(t *testing.T) {
	bare := newOrigin(t)
	f := fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true})
	task := f.WaitDone(f.Submit(fixSpec(bare, &fleet.Delivery{Credentials: fleet.DeliveryCredentials{Token: "nope"}})))
	res := fleettest.Result(t, task)
	if task.State != store.TaskFailed || task.Error != fleet.ReasonDelivery || !strings.Contains(res.Error, `"nope" is not configured`) {
		t.Fatalf("state %s (%s): %s", task.State, task.Error, res.Error)
	}
	if n := f.Model.Total(); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
}

// TestTaskPushRejected: the branch holds someone else's work; the task
// fails with git's message, its commit kept and its diff stored.
func TestTaskPushRejected(t *testing.T) {
	bare := newOrigin(t)
	theirs := workspace(t, bare, map[string]string{"theirs.txt": "theirs\n"})
	git(t, theirs, "add", ".")
	git(t, theirs, "commit", "--quiet", "-m", "someone else")
	git(t, theirs, "push", "--quiet", "origin", "HEAD:refs/heads/agentfleet/protected")
	f := fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true})
	id := f.Submit(fixSpec(bare, &fleet.Delivery{Branch: "agentfleet/protected"}))
	task := f.WaitDone(id)
	res := fleettest.Result(t, task)
	if task.State != store.TaskFailed || task.Error != fleet.ReasonDelivery || !strings.Contains(res.Error, "rejected") {
		t.Fatalf("state %s (%s): %s", task.State, task.Error, res.Error)
	}
	if res.Checks == nil || res.Checks.Verdict != fleet.VerdictPassed {
		t.Errorf("checks %+v", res.Checks)
	}
	for _, kind := range []string{"diff", delivery.ArtifactKind} {
		a, err := f.Store.GetArtifact(context.Background(), store.GetArtifactParams{TaskID: id, Kind: kind})
		if err != nil || !strings.Contains(string(a.Content), "hello, world") {
			t.Errorf("%s artifact %q, %v", kind, a.Content, err)
		}
	}
}

// TestTaskRetriesTemporaryForgeError: the forge answers 503 once; the task
// is handed back, runs again, finds its branch pushed (no second push) and
// opens the request.
func TestTaskRetriesTemporaryForgeError(t *testing.T) {
	bare := newOrigin(t)
	gh := newGitHubFake(t)
	gh.unavailable = 1
	tok := tokenFile(t, "ghp_test")
	f := fleettest.Start(t, fleettest.Options{Workers: 1, SQLite: true, Worker: func(_ int, c *worker.Config) {
		c.Delivery.Tokens = map[string]delivery.Token{"gh": {TokenFile: tok, Forge: "github", APIURL: gh.srv.URL}}
		c.OutboundAllowPrivate = []string{"127.0.0.1"}
	}})
	id := f.Submit(fixSpec(bare, &fleet.Delivery{Credentials: fleet.DeliveryCredentials{Token: "gh"},
		PullRequest: &fleet.PullRequest{Repo: "octo/hello"}}))
	task := f.WaitDone(id)
	res := fleettest.Result(t, task)
	if task.State != store.TaskSucceeded || task.Attempts != 2 {
		t.Fatalf("state %s (%s) after %d attempts: %s", task.State, task.Error, task.Attempts, res.Error)
	}
	pulls, posts := gh.created()
	if len(pulls) != 1 || posts != 2 || res.Delivery.RequestNumber != 1 {
		t.Errorf("%d pulls from %d requests, result %+v: want one pull, opened on the second try", len(pulls), posts, res.Delivery)
	}
	if n := pushes(t, bare); n != 1 {
		t.Errorf("%d pushes, want 1", n)
	}
}
