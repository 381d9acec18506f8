package fleet_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/queue/embedded"
	"github.com/agentfleet/agentfleet/store"
)

// demoDir is examples/demo, found from the package directory.
func demoDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "examples", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := fleet.CheckDemoDir(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// noEnv is an environment without provider keys: the simulated model.
func noEnv(string) string { return "" }

// startDev starts dev mode on free ports in a temporary data directory.
func startDev(t *testing.T, cfg fleet.DevConfig) *fleet.Dev {
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
	dev, err := fleet.StartDev(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dev.Close(); err != nil {
			t.Errorf("closing dev mode: %v", err)
		}
	})
	return dev
}

// TestDevModeDemo runs the demo backlog on dev mode with the simulated
// model: every task, the fan-out one and its subagents included, succeeds
// and leaves the expected fix in its diff.
func TestDevModeDemo(t *testing.T) {
	dir := demoDir(t)
	plan, err := fleet.LoadDemoPlan(dir)
	if err != nil {
		t.Fatal(err)
	}
	dev := startDev(t, fleet.DevConfig{Plan: plan})
	if !dev.Simulated() || !strings.Contains(dev.Model(), "SIMULATED") {
		t.Fatalf("without provider keys dev mode should say it simulates, got %q", dev.Model())
	}
	c, err := dev.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	res, err := fleet.RunDemo(ctx, c, fleet.DemoOptions{Dir: dir, Out: &out, Poll: 100 * time.Millisecond})
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
}

// TestDevModeTwice: a second dev mode on the same address, data directory or
// NATS port fails, naming the address, the lock or the port.
func TestDevModeTwice(t *testing.T) {
	dataDir := t.TempDir()
	natsPort := freePort(t)
	first := startDev(t, fleet.DevConfig{DataDir: dataDir, NATSPort: natsPort})
	addr := strings.TrimPrefix(first.URL(), "http://")
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		cfg  fleet.DevConfig
		want []string
	}{
		{"same address", fleet.DevConfig{Addr: addr, NATSPort: embedded.RandomPort, DataDir: t.TempDir()},
			[]string{"cannot listen on " + addr, "another `dispatcher dev`", "--addr"}},
		{"same data dir", fleet.DevConfig{Addr: "127.0.0.1:0", NATSPort: embedded.RandomPort, DataDir: dataDir},
			[]string{filepath.Join(dataDir, "nats"), "in use by another process"}},
		{"same NATS port", fleet.DevConfig{Addr: "127.0.0.1:0", NATSPort: natsPort, DataDir: t.TempDir()},
			[]string{net.JoinHostPort("127.0.0.1", strconv.Itoa(natsPort)), "another NATS server or `dispatcher dev`"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Getenv = noEnv
			dev, err := fleet.StartDev(ctx, tc.cfg)
			if err == nil {
				dev.Close()
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
	again := startDev(t, fleet.DevConfig{DataDir: dataDir})
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
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestDevConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  fleet.DevConfig
		want string
	}{
		{fleet.DevConfig{Addr: "0.0.0.0:8080"}, "needs a token"},
		{fleet.DevConfig{Addr: "8080"}, "DevConfig.Addr"},
		{fleet.DevConfig{Workers: -1}, "DevConfig.Workers"},
		{fleet.DevConfig{Sessions: -2}, "DevConfig.Sessions"},
		{fleet.DevConfig{NATSPort: 70000}, "DevConfig.NATSPort"},
		{fleet.DevConfig{Plan: fleet.SimPlan{Tasks: []fleet.SimTask{{Match: "x"}}}}, "tasks[0].steps is empty"},
	} {
		err := tc.cfg.WithDefaults().Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.want)
		}
	}
	if err := (fleet.DevConfig{Addr: "0.0.0.0:8080", Token: "s3cret"}).WithDefaults().Validate(); err != nil {
		t.Errorf("a token allows a public address: %v", err)
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
	_, err := fleet.StartDev(ctx, fleet.DevConfig{Addr: "127.0.0.1:0", NATSPort: embedded.RandomPort, DataDir: t.TempDir(),
		Getenv: env(fleet.EnvLLMBaseURL, "http://127.0.0.1:11434/v1")})
	if err == nil || !strings.Contains(err.Error(), fleet.EnvModel) {
		t.Errorf("a base URL without a model: error %v, want one naming %s", err, fleet.EnvModel)
	}
	dev := startDev(t, fleet.DevConfig{Getenv: env("OPENAI_API_KEY", "sk-test", "GEMINI_API_KEY", "g-test")})
	if dev.Simulated() || !strings.Contains(dev.Model(), "[openai gemini]") {
		t.Errorf("with OpenAI and Gemini keys: %q", dev.Model())
	}
	sim := startDev(t, fleet.DevConfig{Simulated: true, Getenv: env("ANTHROPIC_API_KEY", "k")})
	if !sim.Simulated() {
		t.Errorf("--simulated with a key: %q", sim.Model())
	}
	local := startDev(t, fleet.DevConfig{Getenv: env(fleet.EnvLLMBaseURL, "http://127.0.0.1:11434/v1", fleet.EnvModel, "qwen2.5-coder:7b")})
	if !strings.Contains(local.Model(), "qwen2.5-coder:7b") || !strings.Contains(local.Model(), "11434") {
		t.Errorf("with an OpenAI-compatible server: %q", local.Model())
	}
}

// TestDemoBadInput: a demo directory without its files, a plan that does
// not parse, and a backlog with a malformed line are refused with the file
// and line named; nothing is submitted.
func TestDemoBadInput(t *testing.T) {
	dir := t.TempDir()
	if err := fleet.CheckDemoDir(dir); err == nil || !strings.Contains(err.Error(), "backlog.jsonl") && !strings.Contains(err.Error(), "go.mod") {
		t.Errorf("empty demo dir: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plan.json"), []byte(`{"tasks":[{"match":"x","steps":[{"calls":[{"name":"shell"}]}]}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := fleet.LoadDemoPlan(dir); err == nil || !strings.Contains(err.Error(), "end with a text answer") {
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
	dev := startDev(t, fleet.DevConfig{})
	c, err := dev.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = fleet.RunDemo(ctx, c, fleet.DemoOptions{Dir: demo, Out: &bytes.Buffer{}})
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
