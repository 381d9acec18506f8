package delivery_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/delivery"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/store"
)

// TestReopenedTaskDeliversAgain: a delivered task gets a follow-up through
// the API after it succeeded; it is queued again, runs on another worker
// (the first is stopped), which restores its workspace from the delivered
// branch, answers the follow-up as round 2 of its session, re-runs the
// checks and pushes a second commit on top of the first, to the same
// branch and pull request. A follow-up beyond limits.max_followups is
// refused.
func TestReopenedTaskDeliversAgain(t *testing.T) {
	bare := newOrigin(t)
	gh := newGitHubFake(t)
	tok := tokenFile(t, "ghp_test")
	f := fleettest.Start(t, fleettest.Options{Workers: 2, SQLite: true, Worker: func(_ int, c *worker.Config) {
		c.Delivery.Tokens = map[string]delivery.Token{"gh": {TokenFile: tok, Forge: "github", APIURL: gh.srv.URL}}
		c.OutboundAllowPrivate = []string{"127.0.0.1"}
	}})
	c := dispatcherAPI(t, f)
	ctx := context.Background()

	spec := fleettest.Spec("fix the greeting",
		step{Calls: []fleettest.Call{fleettest.Shell("echo 'hello, world' > greeting.txt")}},
		step{Text: "Fix the greeting\n\ngreeting.txt now greets the world."},
		step{Calls: []fleettest.Call{fleettest.Shell("test -f greeting.txt && echo 'goodbye, world' > farewell.txt")}},
		step{Text: "Add a farewell\n\nas asked: {{last_user}}"})
	spec.Environment = fleet.Environment{Repo: bare}
	spec.Checks = []fleet.Check{{Name: "greets", Command: "grep -q world greeting.txt"}}
	spec.Delivery = &fleet.Delivery{Credentials: fleet.DeliveryCredentials{Token: "gh"}, PullRequest: &fleet.PullRequest{Repo: "octo/hello"}}
	spec.Limits.MaxFollowups = 1
	sub, err := c.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	id := sub.Task.ID
	first := f.WaitDone(id)
	res1 := fleettest.Result(t, first)
	if first.State != store.TaskSucceeded || res1.Delivery == nil || !res1.Delivery.Pushed {
		t.Fatalf("first round: state %s (%s), delivery %+v", first.State, first.Error, res1.Delivery)
	}
	for _, w := range f.Workers() {
		if w.ID() == first.WorkerID {
			w.Stop(t)
		}
	}

	resp, err := c.FollowUp(ctx, id, "also say goodbye")
	if err != nil || !resp.Reopened || resp.Round != 2 {
		t.Fatalf("follow-up of the ended task: %+v, %v", resp, err)
	}
	second := f.WaitFor("round 2 to end", id, func(t store.Task) bool { return t.State.Terminal() && t.Attempts == 2 })
	res2 := fleettest.Result(t, second)
	if second.State != store.TaskSucceeded || second.WorkerID == first.WorkerID {
		t.Fatalf("round 2: state %s (%s) on %s (round 1 on %s): %s", second.State, second.Error, second.WorkerID, first.WorkerID, res2.Error)
	}
	if !strings.Contains(res2.FinalText, "also say goodbye") || res2.Checks == nil || res2.Checks.Verdict != fleet.VerdictPassed {
		t.Errorf("round 2 answered %q with checks %+v", res2.FinalText, res2.Checks)
	}
	d1, d2 := res1.Delivery, res2.Delivery
	if d2 == nil || !d2.Pushed || d2.Branch != d1.Branch || d2.RequestNumber != d1.RequestNumber || d2.Commit == d1.Commit {
		t.Fatalf("round 2 delivery %+v, round 1 %+v: want a new commit on the same branch and pull request", d2, d1)
	}
	if parent := git(t, bare, "rev-parse", d2.Commit+"^"); parent != d1.Commit {
		t.Errorf("round 2's commit has parent %s, want round 1's %s", parent, d1.Commit)
	}
	if head := git(t, bare, "rev-parse", "refs/heads/"+d1.Branch); head != d2.Commit {
		t.Errorf("branch at %s, want %s", head, d2.Commit)
	}
	for file, want := range map[string]string{"greeting.txt": "hello, world", "farewell.txt": "goodbye, world"} {
		if got := git(t, bare, "show", d2.Commit+":"+file); got != want {
			t.Errorf("delivered %s = %q, want %q", file, got, want)
		}
	}
	if pulls, posts := gh.created(); len(pulls) != 1 || posts != 1 {
		t.Errorf("%d pulls from %d creations, want the one pull reused", len(pulls), posts)
	}

	_, err = c.FollowUp(ctx, id, "once more")
	var ae *client.APIError
	if !errors.As(err, &ae) || ae.Status != 409 || ae.Code != api.CodeConflict || !strings.Contains(ae.Message, "max_followups") {
		t.Fatalf("a follow-up past max_followups: %v, want 409 conflict", err)
	}
	if got := f.Task(id); got.State != store.TaskSucceeded {
		t.Errorf("a refused follow-up left the task %s", got.State)
	}
}

// dispatcherAPI runs a dispatcher for f's store and queue behind an HTTP
// server and returns its client.
func dispatcherAPI(t *testing.T, f *fleettest.Fleet) *client.Client {
	t.Helper()
	d, err := dispatcher.New(f.Store, f.Queue, dispatcher.Config{Logger: slog.New(slog.DiscardHandler),
		Policy: fleet.Policy{Repositories: fleet.Repositories{AllowLocal: []string{os.TempDir()}}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = d.Run(ctx) }()
	srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{Token: "t0k", SSEDonePoll: 50 * time.Millisecond}))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); stop(); <-ran })
	c, err := client.New(srv.URL, "t0k", nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
