package dashboard_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// TestDashboardRoundsAndSchedules, in headless Chromium: a task that
// ended takes a follow-up from the dashboard, which reopens it; its
// detail then lists two rounds (submitted, followed up through the API)
// and its pull request's state as its forge recorded it (merged); the
// schedules box lists a schedule, pauses, resumes and deletes it.
func TestDashboardRoundsAndSchedules(t *testing.T) {
	bin := chromium(t)
	plan := dev.SimPlan{Tasks: []dev.SimTask{{Match: "browser-rounds", Steps: []dev.SimStep{
		{Text: "First round done."}, {Text: "Second round done."},
	}}}}
	fl := startDev(t, dev.Config{Plan: plan})
	c, err := fl.Client()
	if err != nil {
		t.Fatal(err)
	}
	bg := context.Background()
	res, err := c.Submit(bg, fleet.TaskSpec{Prompt: "browser-rounds: answer twice"})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Task.ID
	testenv.Eventually(t, browserWait, "the first round to end", func() bool {
		v, err := c.Get(bg, id)
		return err == nil && v.State == store.TaskSucceeded
	})
	sched, err := c.CreateSchedule(bg, api.ScheduleRequest{Name: "nightly-lint", Cron: "0 3 * * *", Spec: fleet.TaskSpec{Prompt: "fix every lint finding"}})
	if err != nil {
		t.Fatal(err)
	}

	ctx := newBrowser(t, bin)
	run := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			saveScreenshot(t, ctx, "rounds-failed.png")
			t.Fatalf("%s: %v", what, err)
		}
	}
	run("open the ended task",
		chromedp.Navigate(fl.DashboardURL()),
		chromedp.WaitVisible(css(`#conn[data-live="true"]`)),
		chromedp.Click(css(`#task-list [data-id="`+id.String()+`"]`)),
		chromedp.WaitVisible(css(`#detail[data-state="succeeded"]`)),
		until(`document.querySelectorAll('#rounds-list li').length === 1`))
	run("follow it up from the dashboard",
		chromedp.SetValue(css(`#control-message`), "one more thing"),
		chromedp.Click(css(`#followup-button`)),
		until(`document.querySelector('#toast').textContent.includes("round 2")`),
		until(`document.querySelectorAll('#rounds-list li').length === 2`),
		until(`document.querySelector('#rounds-list li[data-round="2"]').dataset.trigger === "api"`),
		until(`document.querySelector('#rounds-list li[data-round="2"]').textContent.includes("follow-up")`),
		chromedp.WaitVisible(css(`#detail[data-state="succeeded"]`)))
	// What the forge route records when the pull request is merged (a
	// merged task takes no more follow-ups, so this comes last).
	if _, err := fl.Store().PutArtifact(bg, store.PutArtifactParams{TaskID: id, Kind: "outcome", Name: "pull_request",
		ContentType: "application/json", Content: []byte(`{"outcome":"merged","pull_request":7}`)}); err != nil {
		t.Fatal(err)
	}
	run("see the pull request merged",
		chromedp.Reload(),
		chromedp.WaitVisible(css(`#conn[data-live="true"]`)),
		chromedp.Click(css(`#task-list [data-id="`+id.String()+`"]`)),
		until(`document.querySelectorAll('#rounds-list li').length === 2`),
		until(`document.querySelector('#rounds-pr') && document.querySelector('#rounds-pr').dataset.state === "merged"`))
	saveScreenshot(t, ctx, "dashboard-rounds.png")
	rounds, err := c.Rounds(bg, id)
	if err != nil || len(rounds.Rounds) != 2 || rounds.Rounds[1].Trigger != api.TriggerAPI || rounds.PullRequest == nil || rounds.PullRequest.State != "merged" {
		t.Fatalf("GET rounds: %+v, %v", rounds, err)
	}

	row := `#schedule-rows tr[data-id="` + sched.ID.String() + `"]`
	run("pause the schedule",
		chromedp.Click(css(`#schedules-box summary`)),
		chromedp.WaitVisible(css(row+`[data-paused="false"]`)),
		chromedp.Click(css(row+` button[data-act="pause"]`)),
		chromedp.WaitVisible(css(row+`[data-paused="true"]`)))
	if s, err := fl.Store().GetSchedule(bg, sched.ID); err != nil || !s.Paused {
		t.Fatalf("after pause: %+v, %v", s, err)
	}
	run("resume the schedule",
		chromedp.Click(css(row+` button[data-act="resume"]`)),
		chromedp.WaitVisible(css(row+`[data-paused="false"]`)))
	if s, err := fl.Store().GetSchedule(bg, sched.ID); err != nil || s.Paused {
		t.Fatalf("after resume: %+v, %v", s, err)
	}
	run("delete the schedule",
		chromedp.Click(css(row+` button[data-act="delete"]`)),
		until(`document.querySelectorAll('#schedule-rows tr').length === 0`),
		chromedp.WaitVisible(css(`#schedule-empty`)))
	if _, err := fl.Store().GetSchedule(bg, sched.ID); err == nil {
		t.Fatal("the schedule deleted in the dashboard is still stored")
	}
}
