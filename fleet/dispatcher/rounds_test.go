package dispatcher_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/fleet/dispatcher"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/store"
)

// TestRoundsSayWhatTriggeredThem: a task a forge submitted is round 1
// (forge, label, its issue); a follow-up through the API reopens it as
// round 2 (api, by the principal); a reopening a forge's CI event made
// (no trigger on the context, then the forge's event record) is round 3,
// a CI repair. The pull request's state is what the forge recorded.
func TestRoundsSayWhatTriggeredThem(t *testing.T) {
	f := fleettest.Start(t, fleettest.Options{SQLite: true, Workers: 1})
	d := clockDispatcher(t, f)
	srv := httptest.NewServer(d.Handler(dispatcher.APIOptions{Token: "t0k"}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "t0k", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	spec := fleettest.Spec("rounds", fleettest.Step{Text: "one"}, fleettest.Step{Text: "two"}, fleettest.Step{Text: "three"})
	spec.Labels = map[string]string{"forge": "gitea", "forge_repo": "o/r", "forge_issue": "3"}
	res, err := c.Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	id := res.Task.ID
	ended := f.WaitDone(id)
	waitRound := func(n int) {
		t.Helper()
		prev := ended.FinishedAt
		ended = f.WaitFor("the round to end", id, func(t store.Task) bool {
			return t.State == store.TaskSucceeded && t.FinishedAt.After(prev)
		})
		if list, err := c.Rounds(ctx, id); err != nil || len(list.Rounds) != n {
			t.Fatalf("rounds after round %d: %+v, %v", n, list, err)
		}
	}
	if r, err := c.FollowUp(ctx, id, "and the docs"); err != nil || r.Round != 2 {
		t.Fatalf("follow-up: %+v, %v", r, err)
	}
	waitRound(2)
	if _, err := d.Reopen(ctx, ended, "CI failed: lint"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Store.PutArtifact(ctx, store.PutArtifactParams{TaskID: id, Kind: "forge_event", Name: "ci:delivery-1", Content: []byte("ci")}); err != nil {
		t.Fatal(err)
	}
	waitRound(3)
	if _, err := f.Store.PutArtifact(ctx, store.PutArtifactParams{TaskID: id, Kind: "outcome", Name: "pull_request",
		Content: []byte(`{"outcome":"closed","pull_request":12}`)}); err != nil {
		t.Fatal(err)
	}
	list, err := c.Rounds(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	want := []api.Round{
		{Round: 1, Trigger: api.TriggerForge, Cause: "label", Detail: "gitea o/r#3"},
		{Round: 2, Trigger: api.TriggerAPI, By: res.Task.SubmittedBy},
		{Round: 3, Trigger: api.TriggerForge, Cause: api.CauseCI, Detail: "gitea"},
	}
	for i, w := range want {
		g := list.Rounds[i]
		if g.Round != w.Round || g.Trigger != w.Trigger || g.Cause != w.Cause || g.Detail != w.Detail || (w.By != "" && g.By != w.By) || g.At.IsZero() {
			t.Errorf("round %d: %+v, want %+v", i+1, g, w)
		}
	}
	if list.Rounds[1].Input == "" || list.Rounds[1].By == "" {
		t.Errorf("round 2 names no input or principal: %+v", list.Rounds[1])
	}
	if pr := list.PullRequest; pr == nil || pr.State != "closed" || pr.Number != 12 {
		t.Errorf("pull request: %+v, want #12 closed", pr)
	}
}
