package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/llm/ratelimit"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// benchDatabaseEnv passes the store's URL to a worker process (in the
// environment rather than on the command line, where ps would show a
// password).
const benchDatabaseEnv = "AGENTFLEET_DATABASE_URL"

// benchWorkerArgs is everything one worker of a benchmark needs, whether it
// runs in the bench's process or in its own (then as command-line flags,
// see args and parseBenchWorkerArgs).
type benchWorkerArgs struct {
	NATSURL       string  // the bench's embedded NATS server
	DatabaseURL   string  // the shared store; worker processes only
	ModelURL      string  // the simulated model, the anthropic provider's base URL
	WorkspaceRoot string  // the parent of the worker's own workspace directory
	Index         int     // the worker's number: its id is bench-w<Index>
	Slots         int     // sessions
	ProviderRPM   float64 // fleet-wide requests per minute (0: none)
	DeltaWindow   time.Duration
}

func newBenchWorkerArgs(cfg Config, i int, natsURL, modelURL string) benchWorkerArgs {
	return benchWorkerArgs{
		NATSURL:       natsURL,
		DatabaseURL:   cfg.DatabaseURL,
		ModelURL:      modelURL,
		WorkspaceRoot: cmp.Or(cfg.WorkspaceRoot, cfg.Dir),
		Index:         i,
		Slots:         cfg.Slots,
		DeltaWindow:   cfg.DeltaWindow,
		ProviderRPM:   cfg.ProviderRPM,
	}
}

// workerConfig is the configuration of a bench worker: one attempt per
// task, workspaces deleted at once, as many model calls as sessions.
func (a benchWorkerArgs) workerConfig() worker.Config {
	wc := worker.Config{
		ID:             fmt.Sprintf("bench-w%d", a.Index),
		Sessions:       a.Slots,
		WorkspaceRoot:  filepath.Join(a.WorkspaceRoot, fmt.Sprintf("ws-%d", a.Index)),
		Providers:      map[string]worker.ProviderConfig{"anthropic": {APIKey: "bench", BaseURL: a.ModelURL, DefaultModel: "bench-model"}},
		LLMConcurrency: map[string]int{"anthropic": a.Slots},
		KeepFailed:     -1,
		DeltaWindow:    a.DeltaWindow,
		Sandbox:        worker.SandboxAuto, // confined where bubblewrap runs
	}
	wc.Retry.MaxAttempts = 1
	if a.ProviderRPM > 0 {
		wc.RateLimits = ratelimit.Rules{{Provider: "anthropic", Limits: ratelimit.Limits{RequestsPerMinute: a.ProviderRPM}}}
	}
	return wc
}

// args are the flags parseBenchWorkerArgs reads; DatabaseURL goes in the
// environment instead.
func (a benchWorkerArgs) args() []string {
	return []string{
		"--nats-url=" + a.NATSURL,
		"--model-url=" + a.ModelURL,
		"--workspace-root=" + a.WorkspaceRoot,
		"--index=" + strconv.Itoa(a.Index),
		"--slots=" + strconv.Itoa(a.Slots),
		"--delta-window=" + a.DeltaWindow.String(),
		"--provider-rpm=" + strconv.FormatFloat(a.ProviderRPM, 'g', -1, 64),
	}
}

func parseBenchWorkerArgs(args []string) (benchWorkerArgs, error) {
	var a benchWorkerArgs
	fs := flag.NewFlagSet("bench-worker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&a.NATSURL, "nats-url", "", "")
	fs.StringVar(&a.ModelURL, "model-url", "", "")
	fs.StringVar(&a.WorkspaceRoot, "workspace-root", "", "")
	fs.IntVar(&a.Index, "index", 0, "")
	fs.IntVar(&a.Slots, "slots", 0, "")
	fs.DurationVar(&a.DeltaWindow, "delta-window", 0, "")
	fs.Float64Var(&a.ProviderRPM, "provider-rpm", 0, "")
	if err := fs.Parse(args); err != nil {
		return a, fmt.Errorf("bench-worker: %w", err)
	}
	a.DatabaseURL = os.Getenv(benchDatabaseEnv)
	switch {
	case fs.NArg() > 0:
		return a, fmt.Errorf("bench-worker: unexpected arguments %q", fs.Args())
	case a.NATSURL == "" || a.ModelURL == "" || a.WorkspaceRoot == "" || a.Slots < 1:
		return a, errors.New("bench-worker: --nats-url, --model-url, --workspace-root and --slots are required (`agentfleet-dev bench --worker-processes` passes them)")
	case a.DatabaseURL == "":
		return a, fmt.Errorf("bench-worker: %s is unset (`agentfleet-dev bench --worker-processes` passes it)", benchDatabaseEnv)
	}
	return a, nil
}

// runBenchWorker runs one bench worker on st until ctx ends.
func runBenchWorker(ctx context.Context, a benchWorkerArgs, st store.Store, log *slog.Logger) error {
	nc, err := queue.Connect(queue.ConnectOptions{URL: a.NATSURL, Name: fmt.Sprintf("bench-worker-%d", a.Index)}, nats.MaxReconnects(0))
	if err != nil {
		return fmt.Errorf("bench: worker %d: connect to NATS: %w", a.Index, err)
	}
	defer nc.Close()
	q, err := queue.Open(ctx, nc, queue.Config{})
	if err != nil {
		return fmt.Errorf("bench: worker %d: %w", a.Index, err)
	}
	w, err := worker.New(a.workerConfig(), worker.Deps{Store: st, Queue: q, Logger: log})
	if err != nil {
		return fmt.Errorf("bench: worker %d: %w", a.Index, err)
	}
	if err := runUntil(ctx, w); err != nil {
		return fmt.Errorf("bench: worker %d: %w", a.Index, err)
	}
	return nil
}

// runUntil runs w until ctx ends, then drains it (every task has finished
// by then, so the drain has nothing to wait for).
func runUntil(ctx context.Context, w *worker.Worker) error {
	ran := make(chan error, 1)
	go func() { ran <- w.Run(context.WithoutCancel(ctx)) }()
	select {
	case err := <-ran:
		return err
	case <-ctx.Done():
	}
	if err := w.Shutdown(context.Background()); err != nil {
		return err
	}
	return <-ran
}

// benchWorkerResult is the one JSON line a worker process prints on stdout
// when it stops: the store writes it made, which the bench adds to its own.
type benchWorkerResult struct {
	StoreWrites int64 `json:"store_writes"`
}

// WorkerMain is the body of the hidden `agentfleet-dev bench-worker`
// command, one worker process of `agentfleet-dev bench --worker-processes`: it
// reads the flags the bench passes (and the store's URL from
// $AGENTFLEET_DATABASE_URL), opens the store with open, runs the same worker
// the bench runs in process until ctx ends (SIGTERM), then prints its store
// writes as one JSON line on stdout. Warnings and errors are logged to
// stderr, whose end the bench shows if the process fails.
func WorkerMain(ctx context.Context, args []string, open func(context.Context, string) (store.Store, error), stdout, stderr io.Writer) error {
	a, err := parseBenchWorkerArgs(args)
	if err != nil {
		return err
	}
	st, err := open(ctx, a.DatabaseURL)
	if err != nil {
		return fmt.Errorf("bench-worker: %w", err)
	}
	defer func() { _ = st.Close() }()
	counted := &countingStore{Store: st}
	defer startHeapProfile(fmt.Sprintf(".w%d", a.Index))()
	defer startCPUProfile(fmt.Sprintf(".w%d", a.Index))()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := runBenchWorker(ctx, a, counted, log); err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(benchWorkerResult{StoreWrites: counted.writes.Load()})
}
