// Package fleettest starts a whole fleet inside a test: an in-process NATS
// server with JetStream, a store (Postgres from store/pgtest, or SQLite), a
// simulated model (Model, scripted from the task prompts) and N in-process
// workers. Tests submit tasks, wait for their final states and inspect the
// store, the events and the model's requests. Everything is stopped by
// t.Cleanup, workers first.
package fleettest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/pgtest"
	"github.com/agentfleet/agentfleet/store/postgres"
	"github.com/agentfleet/agentfleet/store/sqlite"
)

// Wait bounds every wait of the harness; generous for loaded machines.
const Wait = 60 * time.Second

// Options shape a fleet. The zero value is 2 workers with 2 slots on
// Postgres.
type Options struct {
	Workers int // default 2
	Slots   int // sessions per worker, default 2
	// SQLite uses the SQLite store instead of Postgres.
	SQLite bool
	// Queue adjusts the JetStream layout (AckWait, MaxDeliver...); zero
	// fields are the harness defaults (AckWait 2 s so redeliveries are fast).
	Queue queue.Config
	// Worker adjusts each worker's configuration; i is its index.
	Worker func(i int, c *worker.Config)
	// NoWorkers starts none (StartWorker adds them).
	NoWorkers bool
	// Store, when set, is the store of the fleet (the caller opened it and
	// closes it; DSN is its Postgres DSN, "" for SQLite), instead of a
	// fresh one: a test that stops its own Postgres passes it here.
	Store store.Store
	DSN   string
	// WorkerStore, when set, wraps the store the workers use (to observe
	// their writes); the harness itself uses Fleet.Store unwrapped.
	WorkerStore func(store.Store) store.Store
	// Restricted runs NATS with the shipped permissions
	// (queue.PermissionsFor): the harness connects as the dispatcher
	// user, every worker as the worker user, and PermissionViolations
	// lists what the server refused either of them.
	Restricted bool
	// Observers, with Restricted, adds an observer user per tenant
	// (ObserverUser), subscribed to that tenant's events only
	// (queue.PermissionsFor, RoleObserver); ConnectAs connects as one.
	Observers []string
	// Pools, with Restricted, adds a NATS user per worker pool: the
	// worker role limited to the pool's tenants (queue.PermissionsFor). A
	// worker whose configuration names Tenants connects as the user of
	// exactly those tenants (a test names the pool here first).
	Pools [][]string
}

// Fleet is a running test fleet.
type Fleet struct {
	t     testing.TB
	opts  Options
	NATS  *natstest.Server
	NC    *nats.Conn    // the harness's own connection
	Queue *queue.Client // on NC
	Store store.Store
	Model *Model
	// DSN is the Postgres DSN ("" with SQLite), for worker subprocesses.
	DSN string

	mu         sync.Mutex
	workers    []*Worker
	violations []error // permission violations reported to any connection (Restricted)
}

// Worker is one in-process worker of the fleet.
type Worker struct {
	*worker.Worker
	NC   *nats.Conn
	halt context.CancelFunc // cancels Run's context: the worker halts
	done chan error
}

// Start brings a fleet up for the test.
func Start(t testing.TB, opts Options) *Fleet {
	t.Helper()
	if opts.Workers == 0 {
		opts.Workers = 2
	}
	if opts.Slots == 0 {
		opts.Slots = 2
	}
	if opts.Queue.AckWait == 0 {
		opts.Queue.AckWait = 2 * time.Second
	}
	if opts.Queue.PollInterval == 0 {
		opts.Queue.PollInterval = 100 * time.Millisecond
	}
	if opts.Queue.DeadLetterRetryDelay == 0 {
		opts.Queue.DeadLetterRetryDelay = 200 * time.Millisecond
	}
	f := &Fleet{t: t, opts: opts, Model: NewModel(t)}
	f.NATS = f.startNATS(t)
	f.NC = f.connect(t, queue.RoleDispatcher)
	ctx, cancel := context.WithTimeout(context.Background(), Wait)
	defer cancel()
	var err error
	if f.Queue, err = queue.Open(ctx, f.NC, opts.Queue); err != nil {
		t.Fatal(err)
	}
	if f.Store, f.DSN = opts.Store, opts.DSN; f.Store == nil {
		f.Store = openStore(t, opts.SQLite, &f.DSN)
	}
	t.Cleanup(f.stopAll)
	if !opts.NoWorkers {
		for range opts.Workers {
			f.StartWorker()
		}
	}
	return f
}

func openStore(t testing.TB, lite bool, dsn *string) store.Store {
	if lite {
		return SQLiteStore(t)
	}
	st, url := PostgresStore(t)
	*dsn = url
	return st
}

// SQLiteStore opens a SQLite store in a temporary directory; the test's
// cleanup closes it.
func SQLiteStore(t testing.TB) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "fleet.db")})
	return closeAtCleanup(t, st, err)
}

// PostgresStore opens a store on a fresh database of the test Postgres
// (store/pgtest) and returns it with the database's DSN; the test's
// cleanup closes it.
func PostgresStore(t testing.TB) (store.Store, string) {
	t.Helper()
	dsn := pgtest.NewDatabase(t)
	st, err := postgres.Open(context.Background(), postgres.Config{DSN: dsn, MaxConns: 32})
	return closeAtCleanup(t, st, err), dsn
}

func closeAtCleanup(t testing.TB, st store.Store, err error) store.Store {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// WorkerConfig returns the configuration the harness gives worker i: its
// id, slots, a workspace root, the model, short timings, sandbox "auto",
// and a policy allowing shared working directories under SharedRoot and
// local repositories under the system's temporary directory.
func (f *Fleet) WorkerConfig(i int) worker.Config {
	c := worker.Config{
		ID:                fmt.Sprintf("w%d", i),
		Sessions:          f.opts.Slots,
		WorkspaceRoot:     filepath.Join(f.tempDir(), fmt.Sprintf("ws-w%d", i)),
		Providers:         map[string]worker.ProviderConfig{"anthropic": {APIKey: "test-key", BaseURL: f.Model.URL(), DefaultModel: "claude-test"}},
		HeartbeatInterval: 200 * time.Millisecond,
		StaleAfter:        time.Second,
		DrainGrace:        5 * time.Second,
		RetryBackoff:      100 * time.Millisecond,
		MaxRetryBackoff:   time.Second,
		// Local tasks run under bubblewrap where it runs, unconfined
		// elsewhere, so the fleet tests pass on either machine.
		Sandbox: worker.SandboxAuto,
		// Shared working directories come from SharedDir; repositories
		// from the temporary directory.
		Policy: fleet.Policy{SharedRoots: []string{SharedRoot()},
			Repositories: fleet.Repositories{AllowLocal: []string{os.TempDir()}}},
	}
	c.Retry.MaxAttempts = 1
	if f.opts.Worker != nil {
		f.opts.Worker(i, &c)
	}
	return c
}

// SharedRoot is the shared root (policy.shared_roots) of the harness's
// workers: a directory of the system's temporary directory that holds no
// workspace root, so that a subagent's directory in a gone worker's
// workspace is not mistaken for a shared one.
func SharedRoot() string { return filepath.Join(os.TempDir(), "agentfleet-fleettest-shared") }

// SharedDir returns a new directory under SharedRoot for a shared
// working_dir, removed when the test ends.
func SharedDir(t testing.TB) string {
	t.Helper()
	if err := os.MkdirAll(SharedRoot(), 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(SharedRoot(), "shared-") //nolint:usetesting // must be under SharedRoot, which t.TempDir cannot place
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

var tempMu sync.Mutex

func (f *Fleet) tempDir() string {
	tempMu.Lock()
	defer tempMu.Unlock()
	return f.t.TempDir()
}

// StartWorker starts one more in-process worker with its own NATS
// connection and returns it.
func (f *Fleet) StartWorker() *Worker {
	f.mu.Lock()
	i := len(f.workers)
	f.mu.Unlock()
	return f.StartWorkerWith(f.WorkerConfig(i))
}

// StartWorkerWith starts a worker with cfg.
func (f *Fleet) StartWorkerWith(cfg worker.Config) *Worker {
	t := f.t
	nc := f.connectAs(t, poolUser(cfg.Tenants))
	ctx, cancel := context.WithTimeout(context.Background(), Wait)
	defer cancel()
	q, err := queue.Open(ctx, nc, f.opts.Queue)
	if err != nil {
		t.Fatal(err)
	}
	st := f.Store
	if f.opts.WorkerStore != nil {
		st = f.opts.WorkerStore(st)
	}
	fw, err := worker.New(cfg, worker.Deps{Store: st, Queue: q, Logger: testLogger()})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, halt := context.WithCancel(context.Background())
	w := &Worker{Worker: fw, NC: nc, halt: halt, done: make(chan error, 1)}
	go func() { w.done <- fw.Run(runCtx) }()
	t.Cleanup(func() { w.stop() }) // before its connection closes
	f.mu.Lock()
	f.workers = append(f.workers, w)
	f.mu.Unlock()
	return w
}

// Workers returns the workers started so far.
func (f *Fleet) Workers() []*Worker {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*Worker(nil), f.workers...)
}

// Stop drains the worker (as on SIGTERM) and waits for Run to return.
func (w *Worker) Stop(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Wait)
	defer cancel()
	if err := w.Shutdown(ctx); err != nil {
		t.Fatalf("worker %s did not drain within %s: %v", w.ID(), Wait, err)
	}
	if err := w.wait(); err != nil {
		t.Errorf("worker %s: %v", w.ID(), err)
	}
}

// Kill makes the worker die as a killed process does: its context ends, so
// it stops at once, settles no message and writes nothing more (JetStream
// redelivers its messages after AckWait), and its connection closes.
func (w *Worker) Kill(t testing.TB) {
	t.Helper()
	w.halt()
	if err := w.wait(); err != nil {
		t.Errorf("worker %s: %v", w.ID(), err)
	}
	w.NC.Close()
}

// wait returns Run's error once it has returned (again on later calls).
func (w *Worker) wait() error {
	err := <-w.done
	w.done <- err
	return err
}

func (f *Fleet) stopAll() {
	var drained sync.WaitGroup
	for _, w := range f.Workers() {
		drained.Go(w.stop)
	}
	drained.Wait()
}

// stop drains the worker, halting it if the drain takes longer than Wait.
func (w *Worker) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), Wait)
	defer cancel()
	if w.Shutdown(ctx) != nil {
		w.halt()
	}
	_ = w.wait()
	w.halt()
}

// testLogger discards logs unless FLEETTEST_LOG is set (then: debug to stderr).
func testLogger() *slog.Logger {
	if os.Getenv("FLEETTEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// Spec returns a task spec for the anthropic profile whose model follows
// steps.
func Spec(title string, steps ...Step) fleet.TaskSpec {
	return fleet.TaskSpec{Prompt: Prompt(title, steps...), Profile: "anthropic"}
}

// Submit stores spec as a new task and enqueues its start, as the
// dispatcher does.
func (f *Fleet) Submit(spec fleet.TaskSpec) uuid.UUID {
	f.t.Helper()
	spec = spec.WithDefaults()
	if err := spec.ValidateSubmission(); err != nil {
		f.t.Fatal(err)
	}
	body, _ := json.Marshal(spec)
	ctx, cancel := context.WithTimeout(context.Background(), Wait)
	defer cancel()
	res, err := f.Store.CreateTask(ctx, store.CreateTaskParams{Queue: spec.Queue, Priority: spec.Priority, Spec: body,
		IdempotencyKey: spec.IdempotencyKey, Labels: spec.Labels, Tenant: spec.Tenant})
	if err != nil {
		f.t.Fatal(err)
	}
	o := taskops.StartMessage(res.Task, time.Time{})
	if _, err := f.Queue.Send(ctx, o.To, o.Msg, o.MsgID); err != nil {
		f.t.Fatal(err)
	}
	return res.Task.ID
}

// Task reads a task.
func (f *Fleet) Task(id uuid.UUID) store.Task {
	f.t.Helper()
	t, err := f.Store.GetTask(context.Background(), store.GetTaskParams{ID: id})
	if err != nil {
		f.t.Fatal(err)
	}
	return t
}

// WaitState waits until the task is in one of states and returns it.
func (f *Fleet) WaitState(id uuid.UUID, states ...store.TaskState) store.Task {
	f.t.Helper()
	return f.WaitFor(fmt.Sprintf("task %s in %v", id, states), id, func(t store.Task) bool {
		return slices.Contains(states, t.State)
	})
}

// WaitDone waits until the task is final and returns it.
func (f *Fleet) WaitDone(id uuid.UUID) store.Task {
	f.t.Helper()
	return f.WaitFor(fmt.Sprintf("task %s final", id), id, func(t store.Task) bool { return t.State.Terminal() })
}

// WaitFor polls the task until cond holds (every 10 ms, up to Wait).
func (f *Fleet) WaitFor(what string, id uuid.UUID, cond func(store.Task) bool) store.Task {
	f.t.Helper()
	var last store.Task
	testenv.EventuallyErr(f.t, Wait, what, func() error {
		t, err := f.Store.GetTask(context.Background(), store.GetTaskParams{ID: id})
		if err != nil {
			return err
		}
		last = t
		if !cond(t) {
			return fmt.Errorf("last state %s (error %q, worker %q)", t.State, t.Error, t.WorkerID)
		}
		return nil
	})
	return last
}

// WaitQueueDrained waits until the queue's consumer has no message left,
// pending or in flight. The server applies acks and terms shortly after a
// worker sends them, so a test that reads the lag after a task's end waits.
// It returns the drained lag.
func (f *Fleet) WaitQueueDrained(name string) queue.Lag {
	f.t.Helper()
	var last queue.Lag
	testenv.EventuallyErr(f.t, Wait, "queue "+name+" to drain", func() (err error) {
		if last, err = f.Queue.QueueLag(context.Background(), name); err == nil && last.Total() != 0 {
			err = fmt.Errorf("last lag %+v", last)
		}
		return err
	})
	return last
}

// Result decodes a task's result.
func Result(t testing.TB, task store.Task) fleet.TaskResult {
	t.Helper()
	var r fleet.TaskResult
	if err := json.Unmarshal(task.Result, &r); err != nil {
		t.Fatalf("task %s result %q: %v", task.ID, task.Result, err)
	}
	return r
}
