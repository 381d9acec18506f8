package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/store"
)

// Config configures a fleet benchmark (`agentfleet-dev bench`). The zero
// value of every field means the default named next to it.
type Config struct {
	Tasks   int           // tasks to submit (default 1000)
	Workers int           // workers (default 2)
	Slots   int           // sessions per worker (default: Tasks/Workers, at most 1000)
	Latency time.Duration // simulated model latency per call
	Rounds  int           // model calls per task: Rounds-1 tool rounds, then the answer (default 1)
	Batch   int           // tasks per submit request (default 1000)
	// SubmitConcurrency is how many submit requests are in flight at once
	// (default 1).
	SubmitConcurrency int
	// StreamTokens, when > 0, makes each task's answer that many tokens
	// streamed one per delta, TokenInterval apart (default 10 ms: 100
	// tokens/s); the report then gives events and EVENTS bytes per task.
	StreamTokens  int
	TokenInterval time.Duration
	// DeltaWindow is the workers' worker.Config.DeltaWindow (0: its
	// default; negative: every text delta is an event).
	DeltaWindow time.Duration
	// SubmitOnly starts no workers and measures submission alone: the
	// report's submit_tasks_per_s (the tasks stay queued).
	SubmitOnly bool
	// ContextWindow, when set, is each task's context window in tokens
	// (spec context.window); the simulated model then counts every request
	// and refuses one over the window as Anthropic does.
	ContextWindow int
	// OutputBytes, when set, makes each tool round a shell command that
	// prints that many bytes, instead of an empty glob.
	OutputBytes int
	// ProviderRPM, when > 0, makes the simulated model enforce that many
	// requests a minute (429 beyond, as a provider does) and gives the
	// workers the same fleet-wide rate limit (llm/ratelimit).
	ProviderRPM float64
	// PromptBytes, when set, pads each task's prompt with words to that
	// many bytes (a real task's prompt runs to kilobytes; the default is
	// three words), so that what a prompt costs the store shows.
	PromptBytes int
	// StallRate is the share of tasks (0..1) whose simulated session
	// loops without progress: the model repeats one identical call and
	// never answers, which the progress watchdog must stop (stall.go).
	StallRate float64
	// Priority submits Tasks tasks of priority 0, then LateTasks of
	// priority 100, and reports each class's wait (classes.go); Fairness
	// does the same with tenants a and b at equal weights. Slots default
	// to ClassSlots in these runs.
	Priority, Fairness bool

	// Server targets a running dispatcher (with Token) instead of starting
	// a fleet in the process; its workers and model do the work.
	Server, Token string
	// Profile of the submitted tasks when targeting a server ("" = the
	// dispatcher's default). In process the tasks use "anthropic", served by
	// the simulated model.
	Profile string

	// Store is the store of the in-process fleet (required without Server);
	// StoreName names it in the report ("postgres", "sqlite").
	Store     store.Store
	StoreName string
	// Dir holds the in-process NATS data and workspaces (required without Server).
	Dir string
	// WorkspaceRoot, when set, holds the workers' workspaces instead of Dir.
	// Every task gets a fresh directory, and on some filesystems a mkdir
	// costs more CPU than a trivial session (e.g. tmpfs against ext4).
	WorkspaceRoot string
	// WorkerProcesses runs each worker in a process of its own, started
	// with WorkerCommand, so that each one's peak RSS can be measured. The
	// processes share the store at DatabaseURL, which must be Store's
	// database: a Postgres one.
	WorkerProcesses bool
	// WorkerCommand is the program and leading arguments of a worker process
	// (`agentfleet-dev bench-worker`, which calls WorkerMain); the bench
	// appends the worker's flags.
	WorkerCommand []string
	// DatabaseURL is the store's URL for the worker processes.
	DatabaseURL string
	// StoreServerPID, when not 0, is the process of the store's server on
	// this machine (a Postgres postmaster): the report then gives the CPU
	// its processes used during the run (ServerCPU).
	StoreServerPID int
	// Progress receives a line now and then; nil discards them.
	Progress io.Writer
}

// WithDefaults fills the zero fields.
func (c Config) WithDefaults() Config {
	if c.Tasks == 0 {
		c.Tasks = 1000
	}
	if c.Workers == 0 {
		c.Workers = 2
	}
	if c.Slots == 0 && c.twoClass() {
		c.Slots = ClassSlots
	}
	if c.Slots == 0 {
		c.Slots = min(max((c.Tasks+c.Workers-1)/c.Workers, 1), 1000)
	}
	if c.Rounds == 0 {
		c.Rounds = 1
	}
	if c.Batch == 0 {
		c.Batch = 1000
	}
	if c.TokenInterval == 0 {
		c.TokenInterval = 10 * time.Millisecond
	}
	if c.SubmitConcurrency == 0 {
		c.SubmitConcurrency = 1
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c
}

// Validate names the first field that is wrong.
//
//nolint:gocyclo // one flat case per flag, read top to bottom; splitting it would scatter the flags
func (c Config) Validate() error {
	switch {
	case c.Tasks < 1:
		return fmt.Errorf("bench: --tasks must be >= 1, got %d", c.Tasks)
	case c.Workers < 1:
		return fmt.Errorf("bench: --workers must be >= 1, got %d", c.Workers)
	case c.Slots < 1:
		return fmt.Errorf("bench: --slots must be >= 1, got %d", c.Slots)
	case c.Rounds < 1:
		return fmt.Errorf("bench: --rounds must be >= 1, got %d", c.Rounds)
	case c.ContextWindow < 0 || c.ContextWindow > 0 && c.ContextWindow < fleet.MinContextWindow:
		return fmt.Errorf("bench: --context-window must be 0 or at least %d tokens, got %d", fleet.MinContextWindow, c.ContextWindow)
	case c.PromptBytes < 0 || c.PromptBytes > fleet.MaxPromptBytes:
		return fmt.Errorf("bench: --prompt-bytes must be 0..%d, got %d", fleet.MaxPromptBytes, c.PromptBytes)
	case c.OutputBytes < 0 || c.OutputBytes > 1<<20:
		return fmt.Errorf("bench: --output-bytes must be 0..1048576, got %d", c.OutputBytes)
	case c.Latency < 0:
		return fmt.Errorf("bench: --latency must be >= 0, got %s", c.Latency)
	case c.StreamTokens < 0:
		return fmt.Errorf("bench: --stream-tokens must be >= 0, got %d", c.StreamTokens)
	case c.SubmitConcurrency < 1:
		return fmt.Errorf("bench: --submit-concurrency must be >= 1, got %d", c.SubmitConcurrency)
	case c.Priority && c.Fairness:
		return errors.New("bench: --priority and --fairness are separate runs; choose one")
	case c.twoClass() && c.SubmitOnly:
		return errors.New("bench: --priority and --fairness measure starts; drop --submit-only")
	case c.SubmitOnly && c.WorkerProcesses:
		return errors.New("bench: --submit-only starts no workers; drop --worker-processes")
	case c.ProviderRPM < 0 || c.ProviderRPM != c.ProviderRPM:
		return fmt.Errorf("bench: --provider-rpm must be > 0 (0: no limit), got %v", c.ProviderRPM)
	case c.ProviderRPM > 0 && c.Server != "":
		return errors.New("bench: --provider-rpm limits the simulated provider of an in-process fleet; drop --server or --provider-rpm")
	case !(c.StallRate >= 0 && c.StallRate <= 1):
		return fmt.Errorf("bench: --stall-rate must be a share between 0 and 1, got %v", c.StallRate)
	case c.StallRate > 0 && c.Server != "":
		return errors.New("bench: --stall-rate needs the simulated model of an in-process fleet; drop --server or --stall-rate")
	case c.Batch < 1 || c.Batch > api.MaxBatch:
		return fmt.Errorf("bench: --batch must be between 1 and %d, got %d", api.MaxBatch, c.Batch)
	case c.Server == "" && (c.Store == nil || c.Dir == ""):
		return errors.New("bench: an in-process fleet needs Config.Store and Dir")
	case c.WorkerProcesses && c.Server != "":
		return errors.New("bench: --worker-processes starts a fleet of its own; drop --server or --worker-processes")
	case c.WorkerProcesses && len(c.WorkerCommand) == 0:
		return errors.New("bench: --worker-processes needs Config.WorkerCommand (the program that runs one worker)")
	case c.WorkerProcesses && c.DatabaseURL == "":
		return errors.New("bench: --worker-processes needs a store the processes share: set AGENTFLEET_DATABASE_URL to a postgres:// URL")
	}
	return nil
}

// Percentiles summarise a latency distribution in milliseconds.
type Percentiles struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50_ms"`
	P95   float64 `json:"p95_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
}

func percentiles(ds []time.Duration) Percentiles {
	if len(ds) == 0 {
		return Percentiles{}
	}
	slices.Sort(ds)
	at := func(q float64) float64 {
		i := int(math.Ceil(q*float64(len(ds)))) - 1
		return float64(ds[max(i, 0)]) / float64(time.Millisecond)
	}
	return Percentiles{Count: len(ds), P50: at(0.50), P95: at(0.95), P99: at(0.99), Max: at(1)}
}

// Report is what a benchmark measured.
type Report struct {
	Mode            string      `json:"mode"` // "in-process", "worker-processes" or the server URL
	Store           string      `json:"store,omitempty"`
	Tasks           int         `json:"tasks"`
	Workers         int         `json:"workers,omitempty"`
	Slots           int         `json:"slots_per_worker,omitempty"`
	Rounds          int         `json:"rounds"`
	LatencyMS       float64     `json:"model_latency_ms"`
	Succeeded       int         `json:"succeeded"`
	Failed          int         `json:"failed"` // failed or cancelled
	SubmitSeconds   float64     `json:"submit_s"`
	SubmitTasksPerS float64     `json:"submit_tasks_per_s"`
	Seconds         float64     `json:"duration_s"` // first submit to last finish
	Throughput      float64     `json:"throughput_tasks_per_s"`
	SubmitToStart   Percentiles `json:"submit_to_start"`
	SubmitToDone    Percentiles `json:"submit_to_done"`
	EventDelivery   Percentiles `json:"event_delivery"`
	Events          int         `json:"events"`
	// EventsPerTask and EventBytesPerTask are what the EVENTS stream
	// stored per task during the run (in process only).
	EventsPerTask     float64   `json:"events_per_task,omitempty"`
	EventBytesPerTask float64   `json:"jetstream_event_bytes_per_task,omitempty"`
	StreamTokens      int       `json:"stream_tokens,omitempty"`
	StoreWrites       int64     `json:"store_writes,omitempty"`
	StoreWritesPerS   float64   `json:"store_writes_per_s,omitempty"`
	PeakRSSMB         float64   `json:"peak_rss_mb,omitempty"`        // of this process (with worker processes: NATS, dispatcher, model)
	WorkerPeakRSSMB   []float64 `json:"worker_peak_rss_mb,omitempty"` // of each worker process
	// CPUSeconds is the CPU time of this process during the run (with
	// worker processes: NATS, dispatcher, model and the bench's client);
	// WorkerCPUSeconds that of each worker process, start to exit.
	CPUSeconds       float64   `json:"cpu_s,omitempty"`
	WorkerCPUSeconds []float64 `json:"worker_cpu_s,omitempty"`
	// StoreCPUSeconds is the CPU time of the store's server processes during
	// the run (with Config.StoreServerPID), from before the first submission
	// until the worker processes have exited. Another database's work on the
	// same server counts too.
	StoreCPUSeconds float64 `json:"store_cpu_s,omitempty"`
	FirstError      string  `json:"first_error,omitempty"`
	// With ProviderRPM: the requests the simulated provider received, how
	// many it refused with 429, and the rate it served (admitted requests
	// per minute between the first and the last).
	ProviderRPM      float64        `json:"provider_rpm,omitempty"`
	ProviderRequests int64          `json:"provider_requests,omitempty"`
	Provider429s     int64          `json:"provider_429s"`
	AchievedRPM      float64        `json:"achieved_rpm,omitempty"`
	Context          *ContextReport `json:"context,omitempty"` // with --context-window (context.go)
	// With StallRate: the stalled tasks, how many the watchdog stopped
	// (failed no_progress), and their turns (stall.go).
	Stalled
	// With Priority or Fairness: each class's waits (classes.go).
	Priority *PriorityReport `json:"priority,omitempty"`
	Fairness *FairnessReport `json:"fairness,omitempty"`
}

// Run runs a benchmark: it starts a fleet in the process (or uses
// cfg.Server), submits cfg.Tasks tasks, waits until all have finished and
// reports throughput and latencies.
func Run(ctx context.Context, cfg Config) (Report, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return Report{}, err
	}
	rep := Report{Mode: cfg.Server, Tasks: cfg.total(), Rounds: cfg.Rounds, LatencyMS: float64(cfg.Latency) / float64(time.Millisecond)}
	run := &benchRun{cfg: cfg, profile: cfg.Profile, label: "bench-" + uuid.NewString()[:8]}
	if cfg.Server != "" {
		cl, err := client.New(cfg.Server, cfg.Token, nil)
		if err != nil {
			return rep, err
		}
		run.cl = cl
		return run.run(ctx, rep)
	}
	defer startHeapProfile("")()
	f, err := startBenchFleet(ctx, cfg)
	if err != nil {
		return rep, err
	}
	defer f.stop()
	if run.cl, err = client.New(f.url, "", nil); err != nil {
		return rep, err
	}
	run.profile, run.died, run.model = "anthropic", f.died, f.model
	rep.Mode, rep.Store, rep.Workers, rep.Slots = "in-process", cfg.StoreName, cfg.Workers, cfg.Slots
	if cfg.SubmitOnly {
		rep.Mode, rep.Workers, rep.Slots = "submit-only", 0, 0
	}
	if cfg.WorkerProcesses {
		rep.Mode = "worker-processes"
	}
	w0 := f.store.writes.Load()
	e0, err := f.eventsStored(ctx)
	if err != nil {
		return rep, err
	}
	cpu0 := cpuSeconds()
	server0, err := serverCPU(cfg.StoreServerPID)
	if err != nil {
		return rep, err
	}
	labelled(ctx, "client", func() { rep, err = run.run(ctx, rep) })
	if err != nil {
		return rep, err
	}
	rep.CPUSeconds = cpuSeconds() - cpu0
	rep.StoreWrites = f.store.writes.Load() - w0
	e1, err := f.eventsStored(ctx)
	if err != nil {
		return rep, err
	}
	rep.StreamTokens = cfg.StreamTokens
	rep.EventsPerTask = float64(e1.msgs-e0.msgs) / float64(cfg.total())
	rep.EventBytesPerTask = float64(e1.bytes-e0.bytes) / float64(cfg.total())
	if cfg.WorkerProcesses {
		rss, cpu, writes, err := f.stopProcesses()
		if err != nil {
			return rep, err
		}
		rep.WorkerPeakRSSMB, rep.WorkerCPUSeconds, rep.StoreWrites = rss, cpu, rep.StoreWrites+writes
	}
	server1, err := serverCPU(cfg.StoreServerPID)
	if err != nil {
		return rep, err
	}
	rep.StoreCPUSeconds = server1 - server0
	if rep.Seconds > 0 {
		rep.StoreWritesPerS = float64(rep.StoreWrites) / rep.Seconds
	}
	rep.PeakRSSMB = peakRSSMB()
	if f.rate != nil {
		st := f.rate.Stats()
		rep.ProviderRPM, rep.ProviderRequests, rep.Provider429s = cfg.ProviderRPM, st.Admitted+st.Limited, st.Limited
		if d := st.Last.Sub(st.First).Minutes(); d > 0 {
			rep.AchievedRPM = float64(st.Admitted-1) / d
		}
	}
	return rep, nil
}

// benchRun is one benchmark against a dispatcher.
type benchRun struct {
	cfg     Config
	cl      *client.Client
	profile string
	label   string

	died  <-chan error // a worker process that exited early (none without them)
	model *benchModel  // the in-process simulated model (nil against a server)
	ctxs  compactions  // compaction timings from the event stream

	mu     sync.Mutex
	events []time.Duration         // receive time minus event time
	queued map[uuid.UUID]time.Time // a two-class run's late tasks: when their submission returned
}

func (b *benchRun) run(ctx context.Context, rep Report) (Report, error) {
	if b.cfg.SubmitOnly {
		return b.runSubmitOnly(ctx, rep)
	}
	evCtx, stopEvents := context.WithCancel(ctx)
	defer stopEvents()
	stream, err := b.cl.AllEvents(evCtx, client.StreamOptions{From: "new"})
	if err != nil {
		return rep, fmt.Errorf("bench: subscribe to events: %w", err)
	}
	var g errgroup.Group
	g.Go(func() error { b.collectEvents(stream); return nil })
	defer func() { stopEvents(); _ = stream.Close(); _ = g.Wait() }()

	start := time.Now()
	if err := b.submit(ctx); err != nil {
		return rep, err
	}
	rep.SubmitSeconds = time.Since(start).Seconds()
	rep.SubmitTasksPerS = float64(b.cfg.total()) / rep.SubmitSeconds
	fmt.Fprintf(b.cfg.Progress, "submitted %d tasks in %.2fs\n", b.cfg.total(), rep.SubmitSeconds)
	if err := b.wait(ctx); err != nil {
		return rep, err
	}
	if err := b.measure(ctx, &rep); err != nil {
		return rep, err
	}
	stopEvents()
	_ = stream.Close()
	_ = g.Wait()
	b.mu.Lock()
	rep.EventDelivery, rep.Events = percentiles(b.events), len(b.events)
	b.mu.Unlock()
	if b.cfg.ContextWindow > 0 {
		rep.Context = b.contextReport()
	}
	return rep, nil
}

func (b *benchRun) collectEvents(s *client.EventStream) {
	for {
		ev, err := s.Next()
		if err != nil {
			return
		}
		if ev.End != nil || ev.Event.Time.IsZero() {
			continue
		}
		d := time.Since(ev.Event.Time)
		b.ctxs.observe(ev.Event)
		b.mu.Lock()
		b.events = append(b.events, d)
		b.mu.Unlock()
	}
}

// waitPoll is how often wait counts the bench's tasks. The durations come
// from the tasks' own timestamps, so it only bounds how long the bench
// lingers after the last task; each count is a label query on the store,
// which at 50 ms made most of the store's CPU in a trivial-task run.
const waitPoll = 500 * time.Millisecond

// wait polls the counts of the bench's tasks until all have finished.
func (b *benchRun) wait(ctx context.Context) error {
	tick := time.NewTicker(waitPoll)
	defer tick.Stop()
	last := time.Now()
	for {
		counts, err := b.cl.CountsFiltered(ctx, client.ListFilter{Labels: map[string]string{"bench": b.label}})
		if err != nil {
			return fmt.Errorf("bench: counts: %w", err)
		}
		finished := counts[store.TaskSucceeded] + counts[store.TaskFailed] + counts[store.TaskCancelled]
		if time.Since(last) >= 2*time.Second {
			fmt.Fprintf(b.cfg.Progress, "queued %d running %d waiting %d finished %d/%d\n",
				counts[store.TaskQueued], counts[store.TaskRunning], counts[store.TaskWaiting], finished, b.cfg.total())
			last = time.Now()
		}
		if finished >= int64(b.cfg.total()) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("bench: interrupted with %d of %d tasks finished: %w", finished, b.cfg.total(), ctx.Err())
		case err := <-b.died:
			return err
		case <-tick.C:
		}
	}
}

// measure reads every bench task for its timestamps.
func (b *benchRun) measure(ctx context.Context, rep *Report) error {
	var toStart, toDone []time.Duration
	var first, last time.Time
	var classes classWaits
	f := client.ListFilter{Labels: map[string]string{"bench": b.label}, Limit: 1000}
	for {
		page, err := b.cl.List(ctx, f)
		if err != nil {
			return fmt.Errorf("bench: list tasks: %w", err)
		}
		for _, t := range page.Tasks {
			stalled := t.Labels[stallLabel] != ""
			classes.observe(t)
			if stalled {
				rep.Stalled.observe(t)
			}
			if t.State == store.TaskSucceeded {
				rep.Succeeded++
			} else {
				rep.Failed++
				if rep.FirstError == "" && !(stalled && t.Error == fleet.ReasonNoProgress) {
					rep.FirstError = fmt.Sprintf("task %s %s: %s", t.ID, t.State, t.Error)
				}
			}
			if !t.StartedAt.IsZero() {
				toStart = append(toStart, t.StartedAt.Sub(t.CreatedAt))
			}
			toDone = append(toDone, t.FinishedAt.Sub(t.CreatedAt))
			if first.IsZero() || t.CreatedAt.Before(first) {
				first = t.CreatedAt
			}
			if t.FinishedAt.After(last) {
				last = t.FinishedAt
			}
		}
		if page.NextCursor == "" {
			break
		}
		f.Cursor = page.NextCursor
	}
	rep.Stalled.finish(b.cfg.StallRate)
	classes.finish(b.cfg, rep, b.queued)
	rep.SubmitToStart, rep.SubmitToDone = percentiles(toStart), percentiles(toDone)
	if span := last.Sub(first); span > 0 {
		rep.Seconds = span.Seconds()
		rep.Throughput = float64(rep.Succeeded+rep.Failed) / span.Seconds()
	}
	return nil
}

// WriteText prints the report for people.
func (r Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "fleet benchmark: %s", r.Mode)
	if r.Store != "" {
		fmt.Fprintf(w, ", %s store, %d workers x %d slots", r.Store, r.Workers, r.Slots)
	}
	fmt.Fprintf(w, ", %d rounds, model latency %.0f ms\n", r.Rounds, r.LatencyMS)
	if r.Mode == "submit-only" {
		fmt.Fprintf(w, "  submitted    %d tasks in %.2f s: %.0f tasks/s\n", r.Tasks, r.SubmitSeconds, r.SubmitTasksPerS)
		return
	}
	fmt.Fprintf(w, "  tasks        %d (%d succeeded, %d failed)\n", r.Tasks, r.Succeeded, r.Failed)
	if r.FirstError != "" {
		fmt.Fprintf(w, "  first error  %s\n", r.FirstError)
	}
	fmt.Fprintf(w, "  submit       %.2f s (%.0f tasks/s)\n", r.SubmitSeconds, r.SubmitTasksPerS)
	fmt.Fprintf(w, "  duration     %.2f s (first submit to last finish)\n", r.Seconds)
	fmt.Fprintf(w, "  throughput   %.1f tasks/s\n", r.Throughput)
	for _, p := range []struct {
		name string
		p    Percentiles
	}{{"submit->start", r.SubmitToStart}, {"submit->done ", r.SubmitToDone}, {"event deliv. ", r.EventDelivery}} {
		fmt.Fprintf(w, "  %s p50 %.1f ms  p95 %.1f ms  p99 %.1f ms  max %.1f ms  (n=%d)\n", p.name, p.p.P50, p.p.P95, p.p.P99, p.p.Max, p.p.Count)
	}
	if r.EventsPerTask > 0 {
		fmt.Fprintf(w, "  EVENTS       %.1f events, %.0f bytes per task (%d streamed tokens per answer)\n", r.EventsPerTask, r.EventBytesPerTask, r.StreamTokens)
	}
	if c := r.Context; c != nil {
		fmt.Fprintf(w, "  context      window %d, largest request %d tokens, %d over the window, %d compactions (%d summaries)\n",
			c.Window, c.MaxRequestTokens, c.Overflows, c.Compactions, c.Summaries)
		fmt.Fprintf(w, "  compaction   p50 %.1f ms  p95 %.1f ms  max %.1f ms added per compaction\n", c.AddedLatency.P50, c.AddedLatency.P95, c.AddedLatency.Max)
	}
	r.Stalled.writeText(w)
	r.writeClasses(w)
	if r.StoreWrites > 0 {
		fmt.Fprintf(w, "  store writes %d (%.0f/s)\n", r.StoreWrites, r.StoreWritesPerS)
	}
	if r.CPUSeconds > 0 {
		fmt.Fprintf(w, "  CPU          %.2f ms per task in this process", 1000*r.CPUSeconds/float64(r.Tasks))
		for i, s := range r.WorkerCPUSeconds {
			fmt.Fprintf(w, ", %.2f ms in worker process %d", 1000*s/float64(r.Tasks), i)
		}
		if r.StoreCPUSeconds > 0 {
			fmt.Fprintf(w, ", %.2f ms in the store's server", 1000*r.StoreCPUSeconds/float64(r.Tasks))
		}
		fmt.Fprintln(w)
	}
	if r.ProviderRPM > 0 {
		share := 0.0
		if r.ProviderRequests > 0 {
			share = 100 * float64(r.Provider429s) / float64(r.ProviderRequests)
		}
		fmt.Fprintf(w, "  provider     %d requests, %d answered 429 (%.2f %%), %.0f rpm achieved of %.0f\n",
			r.ProviderRequests, r.Provider429s, share, r.AchievedRPM, r.ProviderRPM)
	}
	switch {
	case len(r.WorkerPeakRSSMB) > 0:
		fmt.Fprintf(w, "  peak RSS     %.0f MB (this process: NATS, dispatcher, model)\n", r.PeakRSSMB)
		fmt.Fprintf(w, "  worker RSS  ")
		for i, mb := range r.WorkerPeakRSSMB {
			fmt.Fprintf(w, " w%d %.0f MB", i, mb)
		}
		fmt.Fprintln(w, " (peak of each worker process)")
	case r.PeakRSSMB > 0:
		fmt.Fprintf(w, "  peak RSS     %.0f MB (the whole in-process fleet)\n", r.PeakRSSMB)
	}
}

// serverCPU is ServerCPU of pid, or 0 when pid is 0 (not measured).
func serverCPU(pid int) (float64, error) {
	if pid == 0 {
		return 0, nil
	}
	return ServerCPU(pid)
}
