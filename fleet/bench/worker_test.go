package bench

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/store"
)

// TestBenchWorkerArgsRoundTrip: what the bench passes a worker process is
// what the process reads, so both build the same worker.Config.
func TestBenchWorkerArgsRoundTrip(t *testing.T) {
	want := benchWorkerArgs{NATSURL: "nats://127.0.0.1:4222", DatabaseURL: "postgres://db/bench", ModelURL: "http://127.0.0.1:9",
		WorkspaceRoot: "/tmp/ws", Index: 1, Slots: 500, DeltaWindow: -1, ProviderRPM: 600}
	t.Setenv(benchDatabaseEnv, want.DatabaseURL)
	got, err := parseBenchWorkerArgs(want.args())
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("parsed %+v, want %+v", got, want)
	}
	wc := got.workerConfig()
	if wc.ID != "bench-w1" || wc.Sessions != 500 || wc.WorkspaceRoot != "/tmp/ws/ws-1" || wc.Providers["anthropic"].BaseURL != want.ModelURL {
		t.Fatalf("worker config %+v", wc)
	}
	if len(wc.RateLimits) != 1 || wc.RateLimits[0].RequestsPerMinute != 600 {
		t.Fatalf("rate limits %+v, want the provider's 600 rpm", wc.RateLimits)
	}
	if err := wc.WithDefaults().Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestBenchProviderRPM: with --provider-rpm the simulated provider
// enforces the limit, the workers share it, and the report counts the
// provider's requests and refusals.
func TestBenchProviderRPM(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := Run(ctx, Config{Tasks: 20, Workers: 2, Rounds: 2, ProviderRPM: 1200,
		Store: fleettest.SQLiteStore(t), StoreName: "sqlite", Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Succeeded != 20 || rep.ProviderRequests != 40+rep.Provider429s || rep.Provider429s != 0 || rep.AchievedRPM <= 0 {
		t.Fatalf("report %+v: want 40 provider requests, none refused", rep)
	}
	if err := (Config{Tasks: 1, Workers: 1, ProviderRPM: -1, Store: rep0Store(t), Dir: t.TempDir()}).WithDefaults().Validate(); err == nil ||
		!strings.Contains(err.Error(), "--provider-rpm") {
		t.Fatalf("a negative --provider-rpm: %v", err)
	}
}

func rep0Store(t *testing.T) store.Store { return fleettest.SQLiteStore(t) }

func TestBenchWorkerArgsErrors(t *testing.T) {
	good := benchWorkerArgs{NATSURL: "nats://x", ModelURL: "http://m", WorkspaceRoot: "/tmp", Slots: 1}.args()
	for _, tc := range []struct {
		name, env string
		args      []string
		want      string
	}{
		{"unknown flag", "pg", append(good, "--bogus=1"), "flag provided but not defined"},
		{"missing slots", "pg", good[:4], "--slots are required"},
		{"extra argument", "pg", append(good, "extra"), "unexpected arguments"},
		{"no database", "", good, benchDatabaseEnv + " is unset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(benchDatabaseEnv, tc.env)
			if _, err := parseBenchWorkerArgs(tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestBenchWorkerProcessDiesEarly: a worker process that exits during the
// run fails the bench with its exit status and the end of its stderr.
func TestBenchWorkerProcessDiesEarly(t *testing.T) {
	if runtime.GOOS == "windows" {
		testenv.SkipOrFatal(t, "needs sh, which Windows lacks")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Run(ctx, Config{
		Tasks: 2, Workers: 1, Store: fleettest.SQLiteStore(t), StoreName: "sqlite", Dir: t.TempDir(),
		WorkerProcesses: true, WorkerCommand: []string{"sh", "-c", "echo boom: no store >&2; exit 3", "bench-worker"},
		DatabaseURL: "unused",
	})
	if err == nil {
		t.Fatal("the bench succeeded with a worker process that exited at once")
	}
	for _, want := range []string{"worker process 0", "exited during the run", "exit status 3", "boom: no store"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

func TestConfigWorkerProcesses(t *testing.T) {
	base := Config{Store: fleettest.SQLiteStore(t), Dir: t.TempDir(), WorkerProcesses: true, WorkerCommand: []string{"x"}, DatabaseURL: "pg"}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"server", func(c *Config) { c.Server = "http://x" }, "drop --server"},
		{"no command", func(c *Config) { c.WorkerCommand = nil }, "WorkerCommand"},
		{"no database", func(c *Config) { c.DatabaseURL = "" }, "AGENTFLEET_DATABASE_URL"},
	} {
		c := base
		tc.edit(&c)
		if err := c.WithDefaults().Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if err := base.WithDefaults().Validate(); err != nil {
		t.Fatal(err)
	}
}
