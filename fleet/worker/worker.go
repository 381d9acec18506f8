package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet/budget"
	"github.com/agentfleet/agentfleet/fleet/internal/holds"
	"github.com/agentfleet/agentfleet/fleet/internal/storegate"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/fleet/internal/tasksandbox"
	"github.com/agentfleet/agentfleet/fleet/models"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/pricing"
	"github.com/agentfleet/agentfleet/llm/ratelimit"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Deps are what a Worker runs on. Store and Queue are required; the caller
// owns them (and the NATS connection) and closes them after Run returns.
type Deps struct {
	Store store.Store
	Queue *queue.Client
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// Registerer receives the worker's Prometheus metrics; nil means a
	// registry of the worker's own, served by Handler at /metrics.
	Registerer prometheus.Registerer
	// NewClient builds the llm.Client of a profile; nil means llm/provider.New
	// from Config.Providers.
	NewClient func(profile string, pc ProviderConfig, retry llm.RetryPolicy) (llm.Client, error)
	// Clock stamps turns and events; nil means the wall clock.
	Clock agent.Clock
}

// Worker pulls tasks and runs their sessions. Create it with New, call Run
// once, and stop it with Shutdown (drain) or by cancelling Run's context
// (halt). Its exported methods are safe for concurrent use.
type Worker struct {
	cfg      Config
	st       store.Store // waits out store outages (storegate.Store)
	raw      store.Store // the store as given, for calls that must not wait
	q        *queue.Client
	log      *slog.Logger
	clock    agent.Clock
	models   *models.Pool
	prices   *pricing.Book
	limits   ratelimit.Lazy                 // the fleet-wide rate limits, once Run opens them
	holds    *holds.Set                     // the fleet's pauses, once Run opens them (holds.go)
	budgets  atomic.Pointer[budget.Watcher] // nil until Run watches them
	metrics  *metrics
	ends     *taskops.Completer  // every end of a task this worker writes
	gatherer prometheus.Gatherer // nil when the caller passed a Registerer

	slots   *queue.Slots
	pub     *queue.EventPublisher // set by Run before any run starts
	ready   atomic.Bool           // pulling and healthy
	health  *storegate.Health
	sandbox tasksandbox.State // how local tasks' commands run
	images  workerImages      // environment images (image.go)
	git     gitStoreClient    // the fleet git store (gitstore.go)
	repos   workerRepos       // repository mirrors and setup snapshots (mirror.go)
	// redacting keeps the secrets every task's outputs are redacted of
	// (redact.go).
	redacting redactCache

	// graceOver is closed when a drain's grace has run out (as running
	// sessions are aborted) or the worker halts: calls waiting out a store
	// outage give up then.
	graceOver     chan struct{}
	graceOverOnce sync.Once

	draining     chan struct{} // closed by Shutdown: stop pulling, then drain
	drainOnce    sync.Once
	stopped      chan struct{}                   // closed when Run returns
	mu           sync.Mutex                      // guards runs
	runs         map[uuid.UUID]*run              // sessions running now, by task id
	endings      endings                         // tasks whose end is being written (ending.go)
	afterEnd     atomic.Pointer[func(uuid.UUID)] // tests: called between an end and its cleanup
	handlerGroup sync.WaitGroup                  // one per delivery being handled
}

// New checks cfg and deps and returns a worker that has not started.
func New(cfg Config, deps Deps) (*Worker, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch {
	case deps.Store == nil:
		return nil, errors.New("worker.Deps.Store is required")
	case deps.Queue == nil:
		return nil, errors.New("worker.Deps.Queue is required")
	}
	slots, err := queue.NewSlots(cfg.Sessions)
	if err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, raw: deps.Store, q: deps.Queue, log: deps.Logger, clock: deps.Clock, slots: slots,
		runs: map[uuid.UUID]*run{}, draining: make(chan struct{}), stopped: make(chan struct{}),
		graceOver: make(chan struct{})}
	w.redacting.fixed = sync.OnceValue(func() map[string]string { return workerSecrets(cfg) })
	if w.log == nil {
		w.log = slog.Default()
	}
	w.log = w.log.With("worker_id", cfg.ID)
	if w.clock == nil {
		w.clock = agent.SystemClock{}
	}
	reg := deps.Registerer
	if reg == nil {
		r := prometheus.NewRegistry()
		reg, w.gatherer = r, r
	}
	if w.metrics, err = newMetrics(reg, w); err != nil {
		return nil, err
	}
	limitMetrics, err := ratelimit.NewMetrics(reg, "worker", prometheus.Labels{"worker": cfg.ID})
	if err != nil {
		return nil, err
	}
	w.models = models.NewPool(models.PoolConfig{Providers: cfg.Providers, Concurrency: cfg.concurrencyFor, Retry: cfg.Retry,
		NewClient: deps.NewClient, Limits: &w.limits, LimitMetrics: limitMetrics, Observe: w.metrics.observeLLM})
	w.prices = newPriceBook(cfg, w)
	w.health = storegate.NewHealth(w.raw, w.log, w.metrics.storeUp, "pulling stops until it does", "pulling resumes")
	w.sandbox = tasksandbox.Start(w.sandboxOperator(), w.log)
	w.st = storegate.Store{Store: w.raw, Health: w.health, GiveUp: w.graceOver, OnRetry: w.metrics.storeRetries.Inc}
	w.ends = w.completer()
	return w, nil
}

// ID is the worker's id.
func (w *Worker) ID() string { return w.cfg.ID }

// Config returns the effective configuration.
func (w *Worker) Config() Config { return w.cfg }

// Ready reports whether the worker is pulling work: started, not
// draining, and its store answering (for /readyz).
func (w *Worker) Ready() bool { return w.ready.Load() && w.health.IsUp() }

// Running returns the ids of the tasks whose sessions run here now.
func (w *Worker) Running() []uuid.UUID {
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := make([]uuid.UUID, 0, len(w.runs))
	for id := range w.runs {
		ids = append(ids, id)
	}
	return ids
}

// Run pulls and runs tasks until Shutdown has drained the worker or ctx
// ends, and returns nil then, or the error that kept it from starting.
// Call it once.
//
// ctx is the worker's life: every store write, settle and model call of
// its sessions runs under it. When ctx ends the worker halts, as a killed
// process would: its sessions stop at once, it settles no message and
// writes nothing more. JetStream redelivers its messages after AckWait and
// the tasks resume on another worker from their recorded turns once their
// heartbeat is older than StaleAfter.
func (w *Worker) Run(ctx context.Context) error {
	defer close(w.stopped)
	keys, defaultKey := w.cfg.pullerKeys()
	closeHolds, err := w.openHolds(ctx)
	if err != nil {
		return err
	}
	defer closeHolds()
	puller, err := w.q.NewPuller(ctx, queue.PullerConfig{Queues: w.cfg.Queues, WorkerID: w.cfg.ID,
		Gate: w.health.Wait, QueueGate: w.queueGate, Keys: keys, DefaultKey: defaultKey})
	if err != nil {
		return err
	}
	if w.pub, err = w.q.NewEventPublisher(); err != nil {
		return err
	}
	defer w.closePublisher(ctx)
	stopBackground, err := w.startBackground(ctx)
	if err != nil {
		return err
	}
	defer stopBackground()
	defer w.watchBudgets(ctx)()
	if err := w.openRateLimits(ctx); err != nil {
		return err
	}
	// Beside the pulls, not before them: a machine with many leftovers
	// must not delay a worker's start.
	var sweep sync.WaitGroup
	sweep.Go(w.sweepSandboxes)
	defer sweep.Wait()
	w.ready.Store(true)
	w.log.Info("worker started", "queues", w.cfg.Queues, "sessions", w.cfg.Sessions, "serves", w.cfg.serves(),
		"allowed_models", w.cfg.AllowedModels)
	w.pull(ctx, puller)
	w.ready.Store(false)
	w.drain(ctx)
	return nil
}

// Shutdown drains the worker: it stops pulling, gives running sessions
// Config.DrainGrace to finish, aborts the rest and hands their tasks back
// to the queue (another worker resumes them from their recorded turns),
// and returns once Run has returned. If ctx ends first, Shutdown returns
// its error while the drain goes on; cancel Run's context to halt.
func (w *Worker) Shutdown(ctx context.Context) error {
	w.drainOnce.Do(func() { close(w.draining) })
	select {
	case <-w.stopped:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startBackground starts the dead-letter watcher and the sweepers, which
// run until the returned stop.
func (w *Worker) startBackground(ctx context.Context) (stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	var dlw *queue.DeadLetterWatcher
	if !w.cfg.NoDeadLetterWatch {
		if dlw, err = w.q.WatchDeadLetters(ctx, taskops.HandleDeadLetter(w.ends, w.metrics.deadLetters.Inc)); err != nil {
			cancel()
			return nil, err
		}
	}
	var background sync.WaitGroup
	background.Go(func() { w.sweepWorkspaces(ctx) })
	background.Go(func() { w.moveOrphanedWorkEvery(ctx) })
	background.Go(func() { w.health.Watch(ctx) })
	return func() {
		cancel()
		if dlw != nil {
			dlw.Stop()
		}
		background.Wait()
	}, nil
}

// pull takes messages while slots are free until Shutdown or ctx ends, and
// hands each to a handler goroutine, so pulling never waits for a
// session's setup. Handlers run under ctx, not under the pull's end.
func (w *Worker) pull(ctx context.Context, p *queue.Puller) {
	pullCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-w.draining:
			cancel()
		case <-pullCtx.Done():
		}
	}()
	handle := func(d *queue.Delivery) {
		w.handlerGroup.Go(func() { w.handle(ctx, d) })
	}
	onError := func(err error) {
		if pullCtx.Err() == nil {
			w.log.Warn("pull failed; retrying", "err", err)
		}
	}
	_ = p.Serve(pullCtx, w.slots, handle, onError) // returns pullCtx's error once pulling stopped
}

// drain waits DrainGrace for the running sessions, then aborts the rest
// with the reason "shutdown" (their handlers hand them back) and waits for
// every handler. A halted worker (ctx ended) does not wait.
func (w *Worker) drain(ctx context.Context) {
	done := make(chan struct{})
	go func() { w.handlerGroup.Wait(); close(done) }()
	grace := time.NewTimer(w.cfg.DrainGrace)
	defer grace.Stop()
	select {
	case <-done:
		return
	case <-ctx.Done():
	case <-grace.C:
		w.log.Info("drain grace over; handing running sessions back", "running", len(w.Running()))
	}
	w.graceOverOnce.Do(func() { close(w.graceOver) })
	w.abortAll(stopShutdown)
	<-done
}

// closePublisher flushes the events still queued, unless the worker halted.
func (w *Worker) closePublisher(ctx context.Context) {
	if ctx.Err() != nil {
		_ = w.pub.Close(ctx) // halted: publish nothing more
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := w.pub.Close(ctx); err != nil {
		w.log.Warn("closing the event publisher", "err", err)
	}
}

// abortAll aborts every session this worker runs, for reason.
func (w *Worker) abortAll(reason string) {
	w.mu.Lock()
	runs := make([]*run, 0, len(w.runs))
	for _, r := range w.runs {
		runs = append(runs, r)
	}
	w.mu.Unlock()
	for _, r := range runs {
		r.abort(reason)
	}
}

func (w *Worker) register(r *run) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.runs[r.task.ID] = r
}

func (w *Worker) unregister(r *run) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.runs[r.task.ID] == r {
		delete(w.runs, r.task.ID)
	}
}

// backoff is the nak delay of the n-th delivery of a retryable failure.
func (w *Worker) backoff(delivered uint64) time.Duration {
	d := w.cfg.RetryBackoff
	for i := uint64(1); i < delivered && d < w.cfg.MaxRetryBackoff; i++ {
		d *= 2
	}
	return min(d, w.cfg.MaxRetryBackoff)
}

func (w *Worker) String() string { return fmt.Sprintf("worker %s", w.cfg.ID) }
