package main

import (
	"context"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/store"
)

// TestSearch: `dispatcher search` finds tasks by prompt and failure
// reason, with the state filter, and says so when nothing matches.
func TestSearch(t *testing.T) {
	f := startDispatcher(t)
	for _, p := range []string{"repair the linter configuration", "write the release notes"} {
		if code, out := run(t, "submit", "--no-wait", p); code != 0 {
			t.Fatalf("submit: %d %s", code, out)
		}
	}
	ctx := context.Background()
	page, err := f.st.ListTasks(ctx, store.ListTasksParams{Query: "release"})
	if err != nil || len(page.Tasks) != 1 {
		t.Fatalf("the release task: %d, %v", len(page.Tasks), err)
	}
	notes := page.Tasks[0].ID
	if _, err := f.st.TransitionTask(ctx, store.TransitionTaskParams{ID: notes, From: store.TaskQueued, To: store.TaskFailed, Error: "changelog missing"}); err != nil {
		t.Fatal(err)
	}
	code, out := run(t, "search", "linter")
	if code != 0 || !strings.Contains(out, "repair the linter configuration") || strings.Contains(out, "release") {
		t.Fatalf("search linter: %d %s", code, out)
	}
	code, out = run(t, "search", "changelog", "--state", "failed")
	if code != 0 || !strings.Contains(out, notes.String()) || !strings.Contains(out, "changelog missing") {
		t.Fatalf("search by failure reason: %d %s", code, out)
	}
	if code, out := run(t, "search", "changelog", "--state", "queued"); code != 0 || !strings.Contains(out, "no task matches") {
		t.Fatalf("search with a state that excludes it: %d %s", code, out)
	}
	if code, out := run(t, "search", "--", "repair", "-linter"); code != 0 || !strings.Contains(out, "no task matches") {
		t.Fatalf("search excluding linter: %d %s", code, out)
	}
	if code, out := run(t, "search"); code != 2 || !strings.Contains(out, "words to search for") {
		t.Fatalf("search without words: %d %s", code, out)
	}
	if code, out := run(t, "search", "x", "--state", "done"); code != 2 || !strings.Contains(out, "not a task state") {
		t.Fatalf("search with a bad state: %d %s", code, out)
	}
}
