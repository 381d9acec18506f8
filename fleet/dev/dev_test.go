package dev_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet/dev"
	"github.com/agentfleet/agentfleet/queue/embedded"
	"github.com/agentfleet/agentfleet/store"
)

// demoDir is examples/demo, found from the package directory.
func demoDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := dev.CheckDemoDir(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// noEnv is an environment without provider keys: the simulated model.
func noEnv(string) string { return "" }

// startDev starts dev mode on free ports in a temporary data directory.
func startDev(t *testing.T, cfg dev.Config) *dev.Fleet {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.NATSPort == 0 {
		cfg.NATSPort = embedded.RandomPort
	}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.Getenv == nil {
		cfg.Getenv = noEnv
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fl, err := dev.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := fl.Close(); err != nil {
			t.Errorf("closing dev mode: %v", err)
		}
	})
	return fl
}

// TestDevModeDemo runs the demo backlog on dev mode with the simulated
// model: every task, the fan-out one and its subagents included, succeeds
// and leaves the expected fix in its diff.
func TestDevModeDemo(t *testing.T) {
	dir := demoDir(t)
	plan, err := dev.LoadDemoPlan(dir)
	if err != nil {
		t.Fatal(err)
	}
	fl := startDev(t, dev.Config{Plan: plan})
	if !fl.Simulated() || !strings.Contains(fl.Model(), "SIMULATED") {
		t.Fatalf("without provider keys dev mode should say it simulates, got %q", fl.Model())
	}
	c, err := fl.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	res, err := dev.RunDemo(ctx, c, dev.DemoOptions{Dir: dir, Out: &out, Poll: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if res.Failed() != 0 || len(res.Roots) != 4 || len(res.Tasks) != 6 {
		t.Fatalf("want 4 roots and 2 subagents all succeeded, got %d roots, %d tasks, %d failed:\n%s",
			len(res.Roots), len(res.Tasks), res.Failed(), out.String())
	}
	wantFix := map[string]string{ // a phrase of the prompt -> a line the diff adds
		"TestAverage":     "+\treturn sum / float64(len(xs))",
		"TestReverse":     "+\tb := []rune(s)",
		"TestTotal":       "+\t\tsum += it.UnitCents * it.Quantity",
		"go vet findings": "+func (s *Stock) Count() int {",
	}
	for _, root := range res.Roots {
		diff, _, err := c.Artifact(ctx, root.ID, "diff", "")
		if err != nil {
			t.Fatalf("diff of %s: %v", root.ID, err)
		}
		for phrase, line := range wantFix {
			if strings.Contains(string(root.Spec), phrase) && !strings.Contains(string(diff), line) {
				t.Errorf("task %q: diff lacks %q:\n%s", phrase, line, diff)
			}
		}
	}
	if !strings.Contains(out.String(), "6 of 6 tasks succeeded") {
		t.Errorf("summary missing:\n%s", out.String())
	}
	for _, root := range res.Roots {
		r, _ := root.TaskResult()
		if r.Checks == nil || r.Delivery == nil || !r.Delivery.Pushed {
			t.Errorf("task %s: checks %+v, delivery %+v: want checks run and the branch pushed", root.ID, r.Checks, r.Delivery)
			continue
		}
		if !strings.Contains(out.String(), "branch: "+r.Delivery.Branch) {
			t.Errorf("the summary does not print branch %s:\n%s", r.Delivery.Branch, out.String())
		}
		cmd := exec.Command("git", "rev-parse", "refs/heads/"+r.Delivery.Branch)
		cmd.Dir = res.Repo
		if got, err := cmd.Output(); err != nil || strings.TrimSpace(string(got)) != r.Delivery.Commit {
			t.Errorf("the demo repository's %s is at %q (%v), want %s", r.Delivery.Branch, got, err, r.Delivery.Commit)
		}
	}
	if !strings.Contains(out.String(), "checks: fixed (test before failed, test after passed)") {
		t.Errorf("the summary does not say the tests were failing before and pass now:\n%s", out.String())
	}
}

// TestDevModeTwice: a second dev mode on the same address, data directory or
// NATS port fails, naming the address, the lock or the port.
func TestDevModeTwice(t *testing.T) {
	dataDir := t.TempDir()
	natsPort := freePort(t)
	first := startDev(t, dev.Config{DataDir: dataDir, NATSPort: natsPort})
	addr := strings.TrimPrefix(first.URL(), "http://")
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		cfg  dev.Config
		want []string
	}{
		{"same address", dev.Config{Addr: addr, NATSPort: embedded.RandomPort, DataDir: t.TempDir()},
			[]string{"cannot listen on " + addr, "another `agentfleet-dev dev`", "--addr"}},
		{"same data dir", dev.Config{Addr: "127.0.0.1:0", NATSPort: embedded.RandomPort, DataDir: dataDir},
			[]string{filepath.Join(dataDir, "nats"), "in use by another process"}},
		{"same NATS port", dev.Config{Addr: "127.0.0.1:0", NATSPort: natsPort, DataDir: t.TempDir()},
			[]string{net.JoinHostPort("127.0.0.1", strconv.Itoa(natsPort)), "another NATS server or `agentfleet-dev dev`"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Getenv = noEnv
			fl, err := dev.Start(ctx, tc.cfg)
			if err == nil {
				_ = fl.Close()
				t.Fatal("a second dev mode started")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	// The first one still serves.
	c, err := first.Client()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Counts(ctx); err != nil {
		t.Fatalf("the first dev mode stopped serving: %v", err)
	}
	// Once it is closed, its data directory can be used again, and the
	// tasks are still there.
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again := startDev(t, dev.Config{DataDir: dataDir})
	if _, err := again.Store().CountTasks(ctx, store.CountTasksParams{}); err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

func TestDevConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  dev.Config
		want string
	}{
		{dev.Config{Addr: "0.0.0.0:8080", NoAuth: true}, "needs a token"},
		{dev.Config{NoAuth: true, Token: "x"}, "choose one"},
		{dev.Config{Addr: "8080"}, "dev.Config.Addr"},
		{dev.Config{Workers: -1}, "dev.Config.Workers"},
		{dev.Config{Sessions: -2}, "dev.Config.Sessions"},
		{dev.Config{NATSPort: 70000}, "dev.Config.NATSPort"},
		{dev.Config{Plan: dev.SimPlan{Tasks: []dev.SimTask{{Match: "x"}}}}, "tasks[0].steps is empty"},
	} {
		err := tc.cfg.WithDefaults().Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.want)
		}
	}
	for _, ok := range []dev.Config{{Addr: "0.0.0.0:8080", Token: "s3cret"}, {Addr: "0.0.0.0:8080"}, {NoAuth: true}} {
		if err := ok.WithDefaults().Validate(); err != nil {
			t.Errorf("%+v: %v (a token, given or generated, allows a public address)", ok, err)
		}
	}
}

// TestDevModeModelChoice: keys choose real providers; a base URL needs a
// model; --simulated wins.
func TestDevModeModelChoice(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	ctx := context.Background()
	_, err := dev.Start(ctx, dev.Config{Addr: "127.0.0.1:0", NATSPort: embedded.RandomPort, DataDir: t.TempDir(),
		Getenv: env(dev.EnvLLMBaseURL, "http://127.0.0.1:11434/v1")})
	if err == nil || !strings.Contains(err.Error(), dev.EnvModel) {
		t.Errorf("a base URL without a model: error %v, want one naming %s", err, dev.EnvModel)
	}
	fl := startDev(t, dev.Config{Getenv: env("OPENAI_API_KEY", "sk-test", "GEMINI_API_KEY", "g-test")})
	if fl.Simulated() || !strings.Contains(fl.Model(), "[openai gemini]") {
		t.Errorf("with OpenAI and Gemini keys: %q", fl.Model())
	}
	sim := startDev(t, dev.Config{Simulated: true, Getenv: env("ANTHROPIC_API_KEY", "k")})
	if !sim.Simulated() {
		t.Errorf("--simulated with a key: %q", sim.Model())
	}
	local := startDev(t, dev.Config{Getenv: env(dev.EnvLLMBaseURL, "http://127.0.0.1:11434/v1", dev.EnvModel, "qwen2.5-coder:7b")})
	if !strings.Contains(local.Model(), "qwen2.5-coder:7b") || !strings.Contains(local.Model(), "11434") {
		t.Errorf("with an OpenAI-compatible server: %q", local.Model())
	}
}

// TestDemoBadInput: a demo directory without its files, a plan that does
// not parse, and a backlog with a malformed line are refused with the file
// and line named; nothing is submitted.
func TestDemoBadInput(t *testing.T) {
	dir := t.TempDir()
	if err := dev.CheckDemoDir(dir); err == nil || !strings.Contains(err.Error(), "backlog.jsonl") && !strings.Contains(err.Error(), "go.mod") {
		t.Errorf("empty demo dir: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plan.json"), []byte(`{"tasks":[{"match":"x","steps":[{"calls":[{"name":"shell"}]}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := dev.LoadDemoPlan(dir); err == nil || !strings.Contains(err.Error(), "end with a text answer") {
		t.Errorf("a plan ending in a tool call: %v", err)
	}
	demo := t.TempDir()
	if err := os.CopyFS(demo, os.DirFS(demoDir(t))); err != nil {
		t.Fatal(err)
	}
	backlog := "{\"prompt\":\"fine\"}\n\n{\"prompt\": \"broken\"\n"
	if err := os.WriteFile(filepath.Join(demo, "backlog.jsonl"), []byte(backlog), 0o644); err != nil {
		t.Fatal(err)
	}
	fl := startDev(t, dev.Config{})
	c, err := fl.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = dev.RunDemo(ctx, c, dev.DemoOptions{Dir: demo, Out: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("malformed line 3: error %v", err)
	}
	counts, err := c.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for state, n := range counts {
		if n != 0 {
			t.Errorf("%d %s tasks after a refused backlog, want none submitted", n, state)
		}
	}
}
