package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
	"github.com/agentfleet/agentfleet/fleet/bench"
	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/postgres"
)

func init() { addCommand(newBenchCmd) }

func newBenchCmd() *cobra.Command {
	var cfg bench.Config
	var server, token string
	var asJSON bool
	var cpuProfile, heapProfile string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Benchmark a fleet: throughput and latencies of N simulated tasks",
		Long: `Start a fleet in this process (an embedded NATS server, the dispatcher, --workers workers
and a simulated model answering after --latency, --rounds calls per task) or target a running
dispatcher with --server, submit --tasks tasks and report throughput (tasks/s), submit->start
and submit->done latency (p50, p95, p99), event delivery latency to a subscriber and store
writes per second. In process the store is the Postgres of $` + cli.EnvDatabaseURL + ` (migrated
up first), else a temporary SQLite file. --worker-processes runs each worker in a process of
its own (this program, re-executed) and reports each one's peak RSS and CPU; it needs the
Postgres of $` + cli.EnvDatabaseURL + `. A Postgres on this machine also gets its CPU over the run
reported (store_cpu_s; docs/cli.md says what it needs). --json prints the report as one JSON object on the last line
(throughput as throughput_tasks_per_s). --submit-only starts no workers and measures
submission alone through the API (submit_tasks_per_s), --submit-concurrency requests at a time.
--stream-tokens N streams each answer as N tokens, one delta each, --token-interval apart, and
reports the events and EVENTS stream bytes per task (--delta-window -1 turns merging off).
--prompt-bytes N pads each task's prompt with words to N bytes, as a real prompt runs (what the
prompt costs the store, its text search above all, then shows in Postgres's CPU per task).
--stall-rate F makes that share of the tasks stall (the model repeats one identical call, never
answering): the progress watchdog must stop each as no_progress, and the report gives how many it
stopped (no_progress_stopped) and the turns each spent on average (turns_spent_stalled); those
expected failures do not fail the run, a stalled task left running does.
--priority submits --tasks tasks of priority 0 (default 2000), then 20 of priority 100, and
reports priority: {low_p50_wait_ms, high_p50_wait_ms, high_p99_wait_ms} (wait: submit to
start) and low_started_after_high, the most low tasks that started while one high task was
queued (from when its submission returned; low_started_after_high_stored counts from when it
was stored, a moment before it was queued); --fairness does the same with tenants a and b
(fairness: {a_p50_wait_ms, b_p50_wait_ms, b_p99_wait_ms, a_started_after_b}). Both default to
8 slots per worker, so that a backlog forms.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if server != "" { // only an explicit --server leaves the process
				cfg.Server, cfg.Token = server, token
				if cfg.Token == "" {
					cfg.Token = os.Getenv(cli.EnvToken)
				}
			}
			if cfg.Server == "" {
				dir, err := os.MkdirTemp("", "agentfleet-bench-")
				if err != nil {
					return failf("%v", err)
				}
				defer func() { _ = os.RemoveAll(dir) }()
				st, name, err := benchStore(c, dir)
				if err != nil {
					return err
				}
				defer func() { _ = st.Close() }()
				cfg.Store, cfg.StoreName, cfg.Dir = st, name, dir
				if name == "postgres" {
					cfg.StoreServerPID = storeServerPID(c)
				}
				if cfg.WorkerProcesses {
					if err := setWorkerProcesses(&cfg, name); err != nil {
						return err
					}
				}
			}
			cfg.Progress = c.ErrOrStderr()
			if (cfg.Priority || cfg.Fairness) && !c.Flags().Changed("tasks") {
				cfg.Tasks = 2000
			}
			if heapProfile != "" { // worker processes inherit it
				_ = os.Setenv(bench.HeapProfileEnv, heapProfile)
			}
			if cpuProfile != "" {
				_ = os.Setenv(bench.CPUProfileEnv, cpuProfile) // worker processes write FILE.w<index>
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return failf("--cpuprofile: %v", err)
				}
				defer stop()
			}
			// Traced as the OTEL_* environment says (off without an endpoint),
			// so the cost of tracing can be measured: docs/operations.md "Tracing".
			stopTracing, err := cli.SetupTracing(c.Context(), "agentfleet-bench", "", cli.TracingConfig{}, cli.NewLogger("text", "warn", c.ErrOrStderr()))
			if err != nil {
				return failf("%v", err)
			}
			defer stopTracing()
			rep, err := bench.Run(c.Context(), cfg)
			if err != nil {
				return failf("%v", err)
			}
			rep.WriteText(c.OutOrStdout())
			if asJSON {
				b, _ := json.Marshal(rep)
				fmt.Fprintln(c.OutOrStdout(), string(b))
			}
			if n := rep.Unexpected(); n > 0 {
				return failf("%d of %d tasks did not succeed", n, rep.Tasks)
			}
			if rep.NoProgressStopped < rep.StalledTasks {
				return failf("%d of %d stalled tasks were not stopped as no_progress", rep.StalledTasks-rep.NoProgressStopped, rep.StalledTasks)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&server, "server", "", "benchmark the running dispatcher at this URL instead of a fleet in this process")
	f.StringVar(&token, "token", "", "bearer token for --server (default $"+cli.EnvToken+")")
	f.IntVar(&cfg.Tasks, "tasks", 1000, "tasks to submit")
	f.IntVar(&cfg.Workers, "workers", 2, "workers")
	f.BoolVar(&cfg.WorkerProcesses, "worker-processes", false, "run each worker in a process of its own and report its peak RSS (needs $"+cli.EnvDatabaseURL+", Postgres)")
	f.IntVar(&cfg.Slots, "slots", 0, "sessions per worker (default tasks/workers, at most 1000)")
	f.DurationVar(&cfg.Latency, "latency", 0, "simulated model latency per call, e.g. 2s")
	f.IntVar(&cfg.Rounds, "rounds", 1, "model calls per task (rounds-1 tool rounds, then the answer)")
	f.IntVar(&cfg.Batch, "batch", 1000, "tasks per submit request")
	f.IntVar(&cfg.StreamTokens, "stream-tokens", 0, "stream each answer as this many tokens, one per delta (reports events and EVENTS bytes per task)")
	f.DurationVar(&cfg.TokenInterval, "token-interval", 10*time.Millisecond, "time between streamed tokens")
	f.DurationVar(&cfg.DeltaWindow, "delta-window", 0, "the workers' event_delta_window (0: default 50ms; negative: one event per delta)")
	f.IntVar(&cfg.SubmitConcurrency, "submit-concurrency", 1, "submit requests in flight at once")
	f.BoolVar(&cfg.SubmitOnly, "submit-only", false, "start no workers and measure submission alone (submit_tasks_per_s; the tasks stay queued)")
	f.IntVar(&cfg.ContextWindow, "context-window", 0, "each task's context window in tokens; the simulated model refuses larger requests and the report gives the largest request and the compactions")
	f.IntVar(&cfg.PromptBytes, "prompt-bytes", 0, "pad each task's prompt with words to this many bytes (default: three words)")
	f.IntVar(&cfg.OutputBytes, "output-bytes", 0, "bytes each tool round prints (a shell command) instead of an empty glob")
	f.Float64Var(&cfg.ProviderRPM, "provider-rpm", 0, "the simulated provider enforces this many requests a minute (429 beyond) and the workers share it as a fleet-wide rate limit; the report adds provider_requests, provider_429s and achieved_rpm")
	f.Float64Var(&cfg.StallRate, "stall-rate", 0, "share of tasks (0..1) whose simulated session repeats one identical call without progress; the report adds no_progress_stopped and turns_spent_stalled")
	f.BoolVar(&cfg.Priority, "priority", false, "submit --tasks tasks of priority 0 (default 2000), then 20 of priority 100; the report adds priority: {low_p50_wait_ms, high_p50_wait_ms, high_p99_wait_ms, low_started_after_high, low_started_after_high_stored}")
	f.BoolVar(&cfg.Fairness, "fairness", false, "submit --tasks tasks of tenant a (default 2000), then 20 of tenant b; the report adds fairness: {a_p50_wait_ms, b_p50_wait_ms, b_p99_wait_ms, a_started_after_b, a_started_after_b_stored}")
	f.StringVar(&cfg.Profile, "profile", "", "profile of the tasks with --server (default: the dispatcher's)")
	f.BoolVar(&asJSON, "json", false, "also print the report as one JSON object on the last line")
	f.StringVar(&cfg.WorkspaceRoot, "workspace-root", "", "directory for the in-process workers' workspaces (default: a temporary directory)")
	f.StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the run to this file (go tool pprof), and each worker process's to FILE.w<index>")
	f.StringVar(&heapProfile, "heap-profile", "", "write a heap profile near the peak heap to this file, and each worker process's to FILE.w<index>")
	return cmd
}

// benchStore opens the Postgres of $AGENTFLEET_DATABASE_URL (migrating it
// up) or a SQLite file in dir.
func benchStore(c *cobra.Command, dir string) (store.Store, string, error) {
	if url := os.Getenv(cli.EnvDatabaseURL); url != "" {
		if _, ok := cli.SQLitePath(url); !ok {
			if err := postgres.Migrate(c.Context(), url); err != nil {
				return nil, "", failf("migrate %s: %v", cli.EnvDatabaseURL, err)
			}
		}
		st, err := cli.OpenStore(c.Context(), url)
		if err != nil {
			return nil, "", failf("%v", err)
		}
		name := "postgres"
		if _, ok := cli.SQLitePath(url); ok {
			name = "sqlite"
		}
		return st, name, nil
	}
	st, err := cli.OpenStore(c.Context(), filepath.Join(dir, "bench.db"))
	if err != nil {
		return nil, "", failf("%v", err)
	}
	return st, "sqlite", nil
}

// setWorkerProcesses points --worker-processes at this program's
// bench-worker command and the shared Postgres store.
func setWorkerProcesses(cfg *bench.Config, storeName string) error {
	if storeName != "postgres" {
		return usageErrorf("--worker-processes needs a store the worker processes share: set %s to a postgres:// URL (a SQLite file is not shared between processes here)", cli.EnvDatabaseURL)
	}
	exe, err := os.Executable()
	if err != nil {
		return failf("--worker-processes: find this program to start the workers: %v", err)
	}
	cfg.WorkerCommand, cfg.DatabaseURL = []string{exe, "bench-worker"}, os.Getenv(cli.EnvDatabaseURL)
	return nil
}

// startCPUProfile profiles this process into path until the returned stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}
