package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/queue/embedded"
)

// demoDir returns examples/demo from the package directory.
func demoDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSubmitDemoBacklogMalformed submits the demo backlog with one line
// broken to a dev-mode dispatcher: the line is named and nothing is
// submitted; with --skip-invalid the other lines are.
func TestSubmitDemoBacklogMalformed(t *testing.T) {
	dev, err := dev.Start(context.Background(), dev.Config{Addr: "127.0.0.1:0", NATSPort: embedded.RandomPort,
		DataDir: t.TempDir(), Simulated: true, Plan: mustPlan(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dev.Close() }()
	good, err := os.ReadFile(filepath.Join(demoDir(t), "backlog.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(good)), "\n")
	lines[1] = lines[1][:len(lines[1])/2] // line 2 cut in half
	bad := filepath.Join(t.TempDir(), "backlog.jsonl")
	if err := os.WriteFile(bad, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := dev.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	total := func() int64 {
		counts, err := c.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, v := range counts {
			n += v
		}
		return n
	}
	code, out := run(t, "submit", "--server", dev.URL(), "--token", dev.Token(), "--file", bad, "--no-wait")
	if code == 0 || !strings.Contains(out, "line 2") {
		t.Fatalf("malformed line 2: exit %d, output %q", code, out)
	}
	if n := total(); n != 0 {
		t.Fatalf("%d tasks submitted from a backlog with a malformed line, want 0", n)
	}
	code, out = run(t, "submit", "--server", dev.URL(), "--token", dev.Token(), "--file", bad, "--no-wait", "--skip-invalid")
	if code != 0 || !strings.Contains(out, "line 2") {
		t.Fatalf("--skip-invalid: exit %d, output %q", code, out)
	}
	if n := total(); n != int64(len(lines)-1) {
		t.Fatalf("--skip-invalid submitted %d tasks, want %d", n, len(lines)-1)
	}
}

func mustPlan(t *testing.T) dev.SimPlan {
	t.Helper()
	p, err := dev.LoadDemoPlan(demoDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
