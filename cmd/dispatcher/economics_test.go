package main

import (
	"strings"
	"testing"
)

// TestBudgetAndUsageCommands: budget set on a label no task has is allowed
// and says so; list and get show it; a negative or non-numeric --limit is
// a usage error naming the flag; usage prints the total.
func TestBudgetAndUsageCommands(t *testing.T) {
	startDispatcher(t)
	code, out := run(t, "budget", "set", "team=web", "--limit", "12.5")
	if code != 0 || !strings.Contains(out, "team=web") || !strings.Contains(out, "$12.50") ||
		!strings.Contains(out, "no task carries the label team=web yet") {
		t.Fatalf("budget set: %d %s", code, out)
	}
	if code, out := run(t, "budget", "list"); code != 0 || !strings.Contains(out, "team=web") || !strings.Contains(out, "hold") {
		t.Fatalf("budget list: %d %s", code, out)
	}
	if code, out := run(t, "budget", "set", "team=web", "--limit", "-1"); code != 2 || !strings.Contains(out, "--limit must be a number >= 0") {
		t.Fatalf("negative limit: %d %s", code, out)
	}
	if code, out := run(t, "budget", "set", "team=web", "--limit", "ten"); code != 2 || !strings.Contains(out, "--limit") {
		t.Fatalf("non-numeric limit: %d %s", code, out)
	}
	if code, out := run(t, "budget", "set", "teamweb", "--limit", "1"); code != 1 || !strings.Contains(out, "label") {
		t.Fatalf("label without =: %d %s", code, out)
	}
	code, out = run(t, "budget", "set", "*", "--tenant", "default", "--limit", "40", "--cancel")
	if code != 0 || !strings.Contains(out, "default") || !strings.Contains(out, "$40.00") || !strings.Contains(out, "cancel") {
		t.Fatalf("budget set * --tenant default: %d %s", code, out)
	}
	if code, out := run(t, "budget", "list", "--tenant", "default"); code != 0 || strings.Contains(out, "team=web") || !strings.Contains(out, "$40.00") {
		t.Fatalf("budget list --tenant default: %d %s, want the tenant's budget only", code, out)
	}
	if code, out := run(t, "budget", "set", "*", "--limit", "1"); code != 1 || !strings.Contains(out, "needs a tenant") {
		t.Fatalf("budget set * without --tenant: %d %s", code, out)
	}
	if code, out := run(t, "budget", "rm", "team=web"); code != 0 {
		t.Fatalf("budget rm: %d %s", code, out)
	}
	if code, out := run(t, "budget", "get", "team=web"); code != 1 || !strings.Contains(out, "no budget") {
		t.Fatalf("budget get after rm: %d %s", code, out)
	}
	if code, out := run(t, "usage", "--by", "model"); code != 0 || !strings.Contains(out, "total") {
		t.Fatalf("usage: %d %s", code, out)
	}
	if code, out := run(t, "usage", "--by", "week"); code != 1 || !strings.Contains(out, "group_by") {
		t.Fatalf("usage --by week: %d %s", code, out)
	}
}
