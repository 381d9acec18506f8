package dashboard_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/store"
)

// TestDashboardBulkCancel: in the dashboard, a filter by label counts the
// tasks first, and the confirm button, which names the count, cancels
// them and shows the outcome.
func TestDashboardBulkCancel(t *testing.T) {
	bin := chromium(t)
	fl := startDev(t, dev.Config{Plan: browserPlan()})
	c, err := fl.Client()
	if err != nil {
		t.Fatal(err)
	}
	// A queue no worker serves: the tasks stay queued until cancelled.
	for range 3 {
		if _, err := c.Submit(context.Background(), fleet.TaskSpec{Prompt: "browser-bulk", Queue: "parked", Labels: map[string]string{"run": "browser-bulk"}}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := newBrowser(t, bin)
	if err := chromedp.Do(ctx,
		chromedp.Navigate(fl.DashboardURL()),
		chromedp.WaitVisible(css(`#conn[data-live="true"]`)),
		chromedp.Click(css(`#bulk-box summary`)),
		chromedp.WaitVisible(css(`#bulk-labels`)),
		chromedp.SetValue(css(`#bulk-action`), "cancel"),
		chromedp.SetValue(css(`#bulk-labels`), "run=browser-bulk"),
		chromedp.Click(css(`#bulk-preview`)),
		until(`document.querySelector('#bulk-status').dataset.matched === "3"`),
		until(`document.querySelectorAll('#bulk-sample li').length === 3`),
		until(`document.querySelector('#bulk-confirm').textContent === "cancel 3 tasks"`),
	); err != nil {
		t.Fatalf("count the tasks: %v", err)
	}
	counts, err := fl.Store().CountTasks(context.Background(), store.CountTasksParams{Labels: map[string]string{"run": "browser-bulk"}})
	if err != nil || counts[store.TaskQueued] != 3 {
		t.Fatalf("the count cancelled something: %v %v", counts, err)
	}
	if err := chromedp.Do(ctx,
		chromedp.Click(css(`#bulk-confirm`)),
		until(`document.querySelector('#bulk-status').dataset.state === "done"`),
		until(`document.querySelector('#bulk-status').textContent.includes("3 cancelled")`),
	); err != nil {
		t.Fatalf("confirm the cancel: %v", err)
	}
	counts, err = fl.Store().CountTasks(context.Background(), store.CountTasksParams{Labels: map[string]string{"run": "browser-bulk"}})
	if err != nil || counts[store.TaskCancelled] != 3 {
		t.Fatalf("after the cancel: %v %v, want 3 cancelled", counts, err)
	}
}

// TestDashboardBulkPauseAndPriority: the bulk box pauses a label (the
// confirm button names the count and the later tasks), sets the priority
// of its queued tasks and resumes it.
func TestDashboardBulkPauseAndPriority(t *testing.T) {
	bin := chromium(t)
	fl := startDev(t, dev.Config{Plan: browserPlan()})
	c, err := fl.Client()
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // a queue no worker serves: they stay queued
		if _, err := c.Submit(context.Background(), fleet.TaskSpec{Prompt: "browser-pause", Queue: "parked", Labels: map[string]string{"run": "browser-pause"}}); err != nil {
			t.Fatal(err)
		}
	}
	ctx := newBrowser(t, bin)
	act := func(action, button, outcome string) chromedp.Action[chromedp.Void] {
		steps := []chromedp.Action[chromedp.Void]{
			chromedp.SetValue(css(`#bulk-action`), action),
			chromedp.Click(css(`#bulk-preview`)),
			until(`document.querySelector('#bulk-confirm').textContent === ` + strconv.Quote(button)),
			chromedp.Click(css(`#bulk-confirm`)),
			until(`document.querySelector('#bulk-status').dataset.state === "done"`),
			until(`document.querySelector('#bulk-status').textContent.includes(` + strconv.Quote(outcome) + `)`),
		}
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			for _, s := range steps {
				if _, err := s(ctx, tg); err != nil {
					return chromedp.Void{}, err
				}
			}
			return chromedp.Void{}, nil
		}
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(fl.DashboardURL()),
		chromedp.WaitVisible(css(`#conn[data-live="true"]`)),
		chromedp.Click(css(`#bulk-box summary`)),
		chromedp.WaitVisible(css(`#bulk-labels`)),
		chromedp.SetValue(css(`#bulk-labels`), "run=browser-pause"),
		act("pause", "pause 2 tasks and later ones", "2 held"),
	); err != nil {
		t.Fatalf("pause: %v", err)
	}
	if v, err := c.Pauses(context.Background()); err != nil || len(v.Pauses) != 1 {
		t.Fatalf("pauses after the dashboard's pause: %+v, %v", v, err)
	}
	if err := chromedp.Do(ctx,
		act("set_priority", "set priority 100 on 2 tasks", "2 moved"),
		act("resume", "resume 2 tasks", "2 start again"),
	); err != nil {
		t.Fatalf("set priority and resume: %v", err)
	}
	page, err := fl.Store().ListTasks(context.Background(), store.ListTasksParams{Labels: map[string]string{"run": "browser-pause"}})
	if err != nil || len(page.Tasks) != 2 || page.Tasks[0].Priority != 100 {
		t.Fatalf("after set priority: %+v, %v", page.Tasks, err)
	}
	if v, err := c.Pauses(context.Background()); err != nil || len(v.Pauses) != 0 {
		t.Fatalf("pauses after the dashboard's resume: %+v, %v", v, err)
	}
}
