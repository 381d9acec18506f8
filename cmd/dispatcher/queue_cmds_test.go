package main

import (
	"strings"
	"testing"
)

// TestTasksPauseAndQueues: `tasks pause` makes a standing pause even with
// nothing queued, `queues list` shows it with a queue pause, and each
// resume ends its own pause once.
func TestTasksPauseAndQueues(t *testing.T) {
	startDispatcher(t)
	if code, out := run(t, "submit", "--label", "run=nightly", "--no-wait", "fix the flaky test"); code != 0 {
		t.Fatalf("submit: %d %s", code, out)
	}
	code, out := run(t, "tasks", "pause", "--label", "run=nightly", "--dry-run")
	if code != 0 || !strings.Contains(out, "pause would act on 1 task") {
		t.Fatalf("dry run: %d %s", code, out)
	}
	if code, out := run(t, "tasks", "pause", "--label", "run=nightly", "--state", "failed", "--yes"); code == 0 || !strings.Contains(out, "queued tasks only") {
		t.Fatalf("a pause of failed tasks: %d %s", code, out)
	}
	code, out = run(t, "tasks", "pause", "--label", "run=nightly", "--yes", "--reason", "bad prompt")
	if code != 0 || !strings.Contains(out, "1 held") {
		t.Fatalf("pause: %d %s", code, out)
	}
	if code, out := run(t, "tasks", "pause", "--label", "run=none", "--yes"); code != 0 || !strings.Contains(out, "0 held") {
		t.Fatalf("a pause with nothing queued yet: %d %s", code, out)
	}
	if code, out := run(t, "queues", "pause", "slow", "--reason", "maintenance"); code != 0 || !strings.Contains(out, "queue slow paused") {
		t.Fatalf("queues pause: %d %s", code, out)
	}
	code, out = run(t, "queues", "list")
	if code != 0 || !strings.Contains(out, "queue slow") || !strings.Contains(out, "filter --label run=nightly") || !strings.Contains(out, "bad prompt") {
		t.Fatalf("queues list: %d %s", code, out)
	}
	if code, out := run(t, "queues", "resume", "slow"); code != 0 || !strings.Contains(out, "resumed") {
		t.Fatalf("queues resume: %d %s", code, out)
	}
	if code, out := run(t, "queues", "resume", "slow"); code == 0 || !strings.Contains(out, "not paused") {
		t.Fatalf("resuming a queue not paused: %d %s", code, out)
	}
	code, out = run(t, "tasks", "resume", "--label", "run=nightly", "--yes")
	if code != 0 || !strings.Contains(out, "1 start again") {
		t.Fatalf("resume: %d %s", code, out)
	}
	if code, out := run(t, "tasks", "resume", "--label", "run=nightly", "--yes"); code == 0 || !strings.Contains(out, "no pause") {
		t.Fatalf("a second resume: %d %s", code, out)
	}
	if code, out := run(t, "tasks", "set-priority", "--label", "run=nightly", "--yes"); code != 2 || !strings.Contains(out, "--priority") {
		t.Fatalf("set-priority without --priority: %d %s", code, out)
	}
	code, out = run(t, "tasks", "set-priority", "--label", "run=nightly", "--priority", "100", "--yes")
	if code != 0 || !strings.Contains(out, "1 moved to another priority level") {
		t.Fatalf("set-priority: %d %s", code, out)
	}
}
