package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestScheduleCommands: create a schedule from a spec file, list it,
// pause it, delete it; a spec file that is no spec is a usage error.
func TestScheduleCommands(t *testing.T) {
	startDispatcher(t)
	dir := t.TempDir()
	spec := filepath.Join(dir, "nightly.json")
	if err := os.WriteFile(spec, []byte(`{"prompt":"fix every lint finding","profile":"openai"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"promt":"typo"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out := run(t, "schedule", "create", "nightly", "--cron", "0 3 * * *", "--spec", bad); code != 2 || !strings.Contains(out, "promt") {
		t.Fatalf("a bad spec file: exit %d, output %q", code, out)
	}
	code, out := run(t, "schedule", "create", "nightly", "--cron", "0 3 * * *", "--spec", spec)
	if code != 0 || !strings.Contains(out, "nightly") || !strings.Contains(out, "T03:00:00Z") {
		t.Fatalf("create: exit %d, output %q", code, out)
	}
	id := strings.Fields(strings.Split(out, "\n")[1])[0]
	if code, out := run(t, "schedule", "pause", id); code != 0 || !strings.Contains(out, "paused") {
		t.Fatalf("pause: exit %d, output %q", code, out)
	}
	if code, out := run(t, "schedule", "list"); code != 0 || !strings.Contains(out, id) {
		t.Fatalf("list: exit %d, output %q", code, out)
	}
	if code, out := run(t, "schedule", "rm", id); code != 0 || !strings.Contains(out, "deleted") {
		t.Fatalf("rm: exit %d, output %q", code, out)
	}
	if code, out := run(t, "schedule", "rm", id); code != 1 || !strings.Contains(out, "not_found") {
		t.Fatalf("rm again: exit %d, output %q", code, out)
	}
}
