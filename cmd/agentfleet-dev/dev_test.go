package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// runDevCmd runs `agentfleet-dev dev` with args on free ports in a temporary data
// directory, with the simulated model, and returns its status and output.
func runDevCmd(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	args = append([]string{"dev", "--simulated", "--addr", "127.0.0.1:0", "--nats-port", "-1", "--data-dir", t.TempDir()}, args...)
	code := execute(ctx, args, strings.NewReader(""), &out, &out)
	return code, out.String()
}

// TestDevDemoExitWhenDone is `make demo` with DEMO_EXIT_WHEN_DONE=1: the
// backlog runs on the simulated model and the command exits 0.
func TestDevDemoExitWhenDone(t *testing.T) {
	code, out := runDevCmd(t, "--demo", demoDir(t), "--exit-when-done")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	for _, want := range []string{"SIMULATED model", "dashboard  http://127.0.0.1:", "/#token=", "export AGENTFLEET_TOKEN=", "submitted 4 tasks", "6 of 6 tasks succeeded", "subagent succeeded"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestDevDemoFailedTask: a backlog task that fails (its turn limit is too
// small for its plan) makes the demo exit 1 and say so.
func TestDevDemoFailedTask(t *testing.T) {
	demo := t.TempDir()
	if err := os.CopyFS(demo, os.DirFS(demoDir(t))); err != nil {
		t.Fatal(err)
	}
	backlog := `{"prompt": "The test TestAverage in stats/ fails.", "limits": {"max_turns": 1}}` + "\n"
	if err := os.WriteFile(filepath.Join(demo, "backlog.jsonl"), []byte(backlog), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out := runDevCmd(t, "--demo", demo, "--exit-when-done")
	if code != 1 || !strings.Contains(out, "0 of 1 tasks succeeded") || !strings.Contains(out, "did not succeed") {
		t.Fatalf("exit %d, want 1 with the failure reported:\n%s", code, out)
	}
}

func TestDevBadUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--exit-when-done"}, 2, "--exit-when-done needs --demo"},
		{[]string{"--demo", "/nonexistent"}, 2, "not a demo directory"},
		{[]string{"examples/demo"}, 2, "did you mean --demo"},
		{[]string{"--no-auth", "--token", "x"}, 1, "choose one"},
		{[]string{"--no-auth", "--addr", "0.0.0.0:0"}, 1, "not a loopback address"},
	} {
		code, out := runDevCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("dev %v: exit %d, output %q; want %d and %q", tc.args, code, out, tc.code, tc.want)
		}
	}
}

// TestDevPortTaken: dev mode on an address in use exits 1 naming it.
func TestDevPortTaken(t *testing.T) {
	dev, err := dev.Start(context.Background(), dev.Config{Addr: "127.0.0.1:0", NATSPort: embedded.RandomPort,
		DataDir: t.TempDir(), Simulated: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = dev.Close() }()
	addr := strings.TrimPrefix(dev.URL(), "http://")
	var out bytes.Buffer
	code := execute(context.Background(), []string{"dev", "--addr", addr, "--nats-port", "-1", "--data-dir", t.TempDir()},
		strings.NewReader(""), &out, &out)
	if code != 1 || !strings.Contains(out.String(), "cannot listen on "+addr) {
		t.Fatalf("exit %d, output %q; want 1 naming %s", code, out.String(), addr)
	}
}
