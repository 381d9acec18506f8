package dashboard_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/store"
)

// TestDashboardSearch: the search box asks the server (SQLite FTS5 in dev
// mode) for the tasks whose prompt or failure reason match, with the
// state filter, and an empty search shows every task again.
func TestDashboardSearch(t *testing.T) {
	bin := chromium(t)
	fl := startDev(t, dev.Config{Plan: browserPlan()})
	c, err := fl.Client()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]uuid.UUID{}
	// A queue no worker serves: the tasks stay as the test leaves them.
	for _, p := range []string{"repair the linter configuration", "tidy the linter warnings", "write the release notes"} {
		res, err := c.Submit(context.Background(), fleet.TaskSpec{Prompt: p, Queue: "parked"})
		if err != nil {
			t.Fatal(err)
		}
		ids[p] = res.Task.ID
	}
	notes := ids["write the release notes"]
	if _, err := fl.Store().TransitionTask(context.Background(), store.TransitionTaskParams{ID: notes,
		From: store.TaskQueued, To: store.TaskFailed, Error: "the flux capacitor overheated"}); err != nil {
		t.Fatal(err)
	}
	ctx := newBrowser(t, bin)
	shows := func(query string, n int) chromedp.Action[chromedp.Void] {
		return until(`document.querySelector('#task-list').dataset.query === ` + jsString(query) +
			` && document.querySelectorAll('#task-list li').length === ` + strconv.Itoa(n))
	}
	if err := chromedp.Do(ctx,
		chromedp.Navigate(fl.DashboardURL()),
		chromedp.WaitVisible(css(`#conn[data-live="true"]`)),
		shows("", 3),
		chromedp.SetValue(css(`#search-q`), "capacitors"),
		chromedp.Click(css(`#search-form button`)),
		shows("capacitors", 1),
		until(`document.querySelector('#task-list li').dataset.id === `+jsString(notes.String())),
		until(`!document.querySelector('#search-status').hidden`),
		chromedp.SetValue(css(`#search-q`), "linter -tidy"),
		chromedp.Click(css(`#search-form button`)),
		shows("linter -tidy", 1),
		until(`document.querySelector('#task-list li').dataset.id === `+jsString(ids["repair the linter configuration"].String())),
		// An empty box (SetValue cannot set "") shows every task again.
		until(`(document.querySelector('#search-q').value = "") === ""`),
		chromedp.Click(css(`#search-form button`)),
		shows("", 3),
		until(`document.querySelector('#search-status').hidden`),
	); err != nil {
		t.Fatalf("search from the dashboard: %v", err)
	}
}
