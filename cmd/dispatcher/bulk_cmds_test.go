package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/viper"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"

	"github.com/agentfleet/agentfleet/store"
)

// TestTasksRetryAndCancel: `tasks retry` shows the count, asks, retries
// once however often it runs; `tasks cancel` cancels by label;
// `retention show` prints the policy.
func TestTasksRetryAndCancel(t *testing.T) {
	f := startDispatcher(t)
	ctx := context.Background()
	for range 3 {
		if code, out := run(t, "submit", "--label", "run=nightly", "--no-wait", "fix the flaky test"); code != 0 {
			t.Fatalf("submit: %d %s", code, out)
		}
	}
	page, err := f.st.ListTasks(ctx, store.ListTasksParams{})
	if err != nil || len(page.Tasks) != 3 {
		t.Fatalf("submitted: %d tasks, %v", len(page.Tasks), err)
	}
	for _, task := range page.Tasks {
		if _, err := f.st.TransitionTask(ctx, store.TransitionTaskParams{ID: task.ID, From: store.TaskQueued, To: store.TaskFailed, Error: "dead_letter"}); err != nil {
			t.Fatal(err)
		}
	}
	if code, out := run(t, "tasks", "retry"); code != 2 || !strings.Contains(out, "at least one filter") {
		t.Fatalf("no filter: %d %s", code, out)
	}
	code, out := run(t, "tasks", "retry", "--label", "run=nightly", "--state", "failed", "--dry-run")
	if code != 0 || !strings.Contains(out, "retry would act on 3 tasks") || f.taskCount(t) != 3 {
		t.Fatalf("dry run: %d %s (%d tasks)", code, out, f.taskCount(t))
	}
	if code, out := run(t, "tasks", "retry", "--label", "run=nightly", "--state", "failed"); code != 1 || !strings.Contains(out, "nothing done") || f.taskCount(t) != 3 {
		t.Fatalf("unconfirmed: %d %s", code, out)
	}
	var buf bytes.Buffer
	code = execute(ctx, []string{"tasks", "retry", "--label", "run=nightly", "--state", "failed"}, strings.NewReader("y\n"), &buf, &buf)
	if out := buf.String(); code != 0 || !strings.Contains(out, "3 new attempts, 0 already retried") || f.taskCount(t) != 6 {
		t.Fatalf("confirmed retry: %d %s (%d tasks)", code, out, f.taskCount(t))
	}
	code, out = run(t, "tasks", "retry", "--label", "run=nightly", "--state", "failed", "--yes")
	if code != 0 || !strings.Contains(out, "0 new attempts, 3 already retried") || f.taskCount(t) != 6 {
		t.Fatalf("second retry: %d %s (%d tasks)", code, out, f.taskCount(t))
	}
	code, out = run(t, "tasks", "cancel", "--label", "run=nightly", "--yes", "--reason", "bad prompt")
	if code != 0 || !strings.Contains(out, "3 cancelled") {
		t.Fatalf("cancel by label: %d %s", code, out)
	}
	counts, err := f.st.CountTasks(ctx, store.CountTasksParams{})
	if err != nil || counts[store.TaskCancelled] != 3 || counts[store.TaskFailed] != 3 {
		t.Fatalf("after the cancel: %v %v, want 3 cancelled and 3 failed", counts, err)
	}
	if code, out := run(t, "retention", "show"); code != 0 || !strings.Contains(out, "(default)") || !strings.Contains(out, "for ever") ||
		!strings.Contains(out, "EVENTS") || !strings.Contains(out, "stream max age") || !strings.Contains(out, "AUDIT") ||
		!strings.Contains(out, "2160h") {
		t.Fatalf("retention show: %d %s", code, out)
	}
}

// TestServeConfigRetention: retention is read from the file, per tenant,
// and a window under the floor is refused naming its key.
func TestServeConfigRetention(t *testing.T) {
	file := filepath.Join(t.TempDir(), "serve.yaml")
	yaml := "database_url: x.db\ntoken: tk\nretention:\n  default: {turns: 720h}\n  tenants:\n    team-a: {artifacts: 2h, turns: -1, audit: 24h}\n  batch: 500\naudit_retention: 720h\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := cli.Load[ServeConfig](viper.New(), file)
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Retention
	if r.Default.Turns != 720*time.Hour || r.Tenants["team-a"].Artifacts != 2*time.Hour || r.Tenants["team-a"].Turns != -1 || r.Batch != 500 ||
		r.Tenants["team-a"].Audit != 24*time.Hour || cfg.AuditRetention != 720*time.Hour {
		t.Fatalf("retention read %+v", r)
	}
	if err := os.WriteFile(file, []byte("database_url: x.db\ntoken: tk\nretention: {default: {turns: 1m}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.Load[ServeConfig](viper.New(), file); err == nil || !strings.Contains(err.Error(), "retention.default.turns") {
		t.Fatalf("a window under the floor: %v", err)
	}
	for _, bad := range []struct{ yaml, key string }{
		{"retention: {tenants: {team-b: {audit: 30m}}}", "retention.tenants.team-b.audit is 30m0s"},
		{"audit_retention: 10m", "audit_retention is 10m0s"},
	} {
		if err := os.WriteFile(file, []byte("database_url: x.db\ntoken: tk\n"+bad.yaml+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := cli.Load[ServeConfig](viper.New(), file); err == nil || !strings.Contains(err.Error(), bad.key) {
			t.Fatalf("an audit window under the floor (%s): %v, want %q", bad.yaml, err, bad.key)
		}
	}
}
