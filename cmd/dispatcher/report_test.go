package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/store"
)

// TestReportCommand: report prints the comparison as Markdown, CSV and
// JSON; export prints one JSON line per finished task; a bad format or
// label is a usage error.
func TestReportCommand(t *testing.T) {
	f := startDispatcher(t)
	ctx := context.Background()
	end := func(model string, to store.TaskState, reason string) {
		t.Helper()
		res, err := f.st.CreateTask(ctx, store.CreateTaskParams{Spec: json.RawMessage(`{"prompt":"p"}`),
			Labels: map[string]string{"backlog": "b1", "model": model}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.st.ClaimTask(ctx, store.ClaimTaskParams{ID: res.Task.ID, WorkerID: "w"}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.st.TransitionTask(ctx, store.TransitionTaskParams{ID: res.Task.ID, From: store.TaskRunning, To: to,
			Result: json.RawMessage(`{"final_text":"ok","success":true,"turns_used":2}`), Error: reason}); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		end("a", store.TaskSucceeded, "")
	}
	end("a", store.TaskFailed, "no_progress")
	end("b", store.TaskSucceeded, "")

	args := []string{"report", "--label", "backlog=b1", "--label", "model=a", "--compare", "model=b"}
	code, out := run(t, args...)
	if code != 0 || !strings.Contains(out, "|  | backlog=b1, model=a | backlog=b1, model=b |") ||
		!strings.Contains(out, "| Success rate (95% Wilson interval) | 75.0% [30.1%, 95.4%] | 100.0% [20.7%, 100.0%] |") ||
		!strings.Contains(out, "| failed | no_progress | 1 |") {
		t.Fatalf("report --format md: %d\n%s", code, out)
	}
	code, out = run(t, append(args, "--format", "csv")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "filter,tasks,") || !strings.HasPrefix(lines[1], `"backlog=b1, model=a",4,0,0,3,1,4,0.75,`) {
		t.Fatalf("report --format csv: %d\n%s", code, out)
	}
	code, out = run(t, append(args, "--format", "json")...)
	var rs api.Reports
	if err := json.Unmarshal([]byte(out), &rs); code != 0 || err != nil || rs.Compare == nil || rs.Compare.Succeeded != 1 {
		t.Fatalf("report --format json: %d %v\n%s", code, err, out)
	}
	code, out = run(t, "export", "--label", "model=a")
	if n := strings.Count(out, "\n"); code != 0 || n != 4 || !strings.Contains(out, `"final_answer":"ok"`) {
		t.Fatalf("export: %d, %d lines\n%s", code, n, out)
	}
	if code, out := run(t, append(args, "--format", "html")...); code != 2 || !strings.Contains(out, "--format") {
		t.Fatalf("--format html: %d %s", code, out)
	}
	if code, out := run(t, "report", "--label", "nokv"); code != 2 || !strings.Contains(out, "key=value") {
		t.Fatalf("--label nokv: %d %s", code, out)
	}
}
