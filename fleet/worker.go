package fleet

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
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// WorkerDeps are what a Worker runs on. Store and Queue are required; the
// caller owns them (and the NATS connection) and closes them after Run
// returns.
type WorkerDeps struct {
	Store store.Store
	Queue *queue.Client
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// Registerer receives the worker's Prometheus metrics; nil means a
	// registry of the worker's own, served by Handler at /metrics.
	Registerer prometheus.Registerer
	// NewClient builds the llm.Client of a profile; nil means llm/provider.New
	// from WorkerConfig.Providers. Tests and dev mode pass llmtest here.
	NewClient func(profile string, pc ProviderConfig, retry llm.RetryPolicy) (llm.Client, error)
	// Clock stamps turns and events; nil means the wall clock.
	Clock agent.Clock
}

// Worker pulls tasks and runs their sessions. Create it with NewWorker and
// call Run once. Its exported methods are safe for concurrent use.
type Worker struct {
	cfg      WorkerConfig
	st       store.Store
	q        *queue.Client
	log      *slog.Logger
	clock    agent.Clock
	llm      *llmPool
	metrics  *workerMetrics
	gatherer prometheus.Gatherer // nil when the caller passed a Registerer

	slots  *queue.Slots
	pub    *queue.EventPublisher // set by Run before any run starts
	ready  atomic.Bool           // pulling and healthy
	crash  atomic.Bool           // Crash was called: write nothing more
	runCtx context.Context       // canceled by Crash; parent of every run

	mu      sync.Mutex         // guards runs, stopRun
	runs    map[uuid.UUID]*run // sessions running now, by task id
	stopRun context.CancelFunc // cancels runCtx
	handled sync.WaitGroup     // one per delivery being handled
}

// NewWorker checks cfg and deps and returns a worker that has not started.
func NewWorker(cfg WorkerConfig, deps WorkerDeps) (*Worker, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch {
	case deps.Store == nil:
		return nil, errors.New("fleet.WorkerDeps.Store is required")
	case deps.Queue == nil:
		return nil, errors.New("fleet.WorkerDeps.Queue is required")
	}
	slots, err := queue.NewSlots(cfg.Sessions)
	if err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg, st: deps.Store, q: deps.Queue, log: deps.Logger, clock: deps.Clock, slots: slots,
		runs: map[uuid.UUID]*run{}}
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
	if w.metrics, err = newWorkerMetrics(reg, w); err != nil {
		return nil, err
	}
	w.llm = newLLMPool(cfg, deps.NewClient, w.metrics)
	w.runCtx, w.stopRun = context.WithCancel(context.Background())
	return w, nil
}

// ID is the worker's id.
func (w *Worker) ID() string { return w.cfg.ID }

// Config returns the effective configuration.
func (w *Worker) Config() WorkerConfig { return w.cfg }

// Ready reports whether the worker is pulling work (for /readyz).
func (w *Worker) Ready() bool { return w.ready.Load() && !w.crash.Load() }

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

// Run pulls and runs tasks until ctx ends, then drains: it stops pulling,
// lets running sessions finish for WorkerConfig.DrainGrace, aborts the rest
// and hands them back to the queue (they resume elsewhere from their
// recorded turns). It returns nil after a drain, or the error that kept it
// from starting.
func (w *Worker) Run(ctx context.Context) error {
	puller, err := w.q.NewPuller(ctx, queue.PullerConfig{Queues: w.cfg.Queues, WorkerID: w.cfg.ID})
	if err != nil {
		return err
	}
	if w.pub, err = w.q.NewEventPublisher(); err != nil {
		return err
	}
	defer w.closePublisher()
	if !w.cfg.NoDeadLetterWatch {
		dlw, err := w.q.WatchDeadLetters(ctx, HandleDeadLetter(w.st, w.log))
		if err != nil {
			return err
		}
		defer dlw.Stop()
	}
	var background sync.WaitGroup
	background.Go(func() { w.sweepWorkspaces(ctx) })
	background.Go(func() { w.moveOrphanedWorkEvery(ctx) })
	defer background.Wait()
	w.ready.Store(true)
	w.log.Info("worker started", "queues", w.cfg.Queues, "sessions", w.cfg.Sessions)
	w.pull(ctx, puller)
	w.ready.Store(false)
	w.drain()
	return nil
}

// pull takes messages while slots are free until ctx ends, and hands each
// to a handler goroutine, so pulling never waits for a session's setup.
func (w *Worker) pull(ctx context.Context, p *queue.Puller) {
	handle := func(d *queue.Delivery) {
		if w.crash.Load() {
			d.Abandon()
			return
		}
		w.handled.Add(1)
		go func() {
			defer w.handled.Done()
			w.handle(d)
		}()
	}
	onError := func(err error) {
		if !w.crash.Load() {
			w.log.Warn("pull failed; retrying", "err", err)
		}
	}
	// Crash cancels runCtx: stop pulling then too, rather than take and
	// abandon messages (each abandonment counts towards MaxDeliver).
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(w.runCtx, cancel)
	defer stop()
	_ = p.Serve(ctx, w.slots, handle, onError) // returns ctx's error once pulling stopped
}

// drain waits DrainGrace for running sessions, then aborts the rest with
// the reason "shutdown" (their handlers hand them back) and waits for every
// handler.
func (w *Worker) drain() {
	done := make(chan struct{})
	go func() { w.handled.Wait(); close(done) }()
	select {
	case <-done:
		return
	case <-time.After(w.cfg.DrainGrace):
	}
	w.log.Info("drain grace over; handing running sessions back", "running", len(w.Running()))
	w.abortAll(stopShutdown)
	<-done
}

func (w *Worker) closePublisher() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.pub.Close(ctx); err != nil {
		w.log.Warn("closing the event publisher", "err", err)
	}
}

// Crash simulates the sudden death of the worker process, for tests of
// recovery: from now on the worker writes nothing to the store or the
// queue, abandons its deliveries (JetStream redelivers them after AckWait)
// and stops pulling. Sessions are aborted without recording anything more.
// Run returns once the handlers are gone. The caller should then cancel
// Run's context.
func (w *Worker) Crash() {
	w.crash.Store(true)
	w.ready.Store(false)
	w.stopRun()
	w.abortAll(stopCrash)
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

func (w *Worker) running(id uuid.UUID) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.runs[id]
	return ok
}

// errCrashed is returned by writes attempted after Crash.
var errCrashed = errors.New("fleet: worker crashed (test)")

// backoff is the nak delay of the n-th delivery of a retryable failure.
func (w *Worker) backoff(delivered uint64) time.Duration {
	d := w.cfg.RetryBackoff
	for i := uint64(1); i < delivered && d < w.cfg.MaxRetryBackoff; i++ {
		d *= 2
	}
	return min(d, w.cfg.MaxRetryBackoff)
}

func (w *Worker) String() string { return fmt.Sprintf("worker %s", w.cfg.ID) }
