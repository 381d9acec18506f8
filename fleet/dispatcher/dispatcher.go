package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/fleet/dispatcher/webhook"
	"github.com/agentfleet/agentfleet/fleet/internal/holds"
	"github.com/agentfleet/agentfleet/fleet/internal/storegate"
	"github.com/agentfleet/agentfleet/fleet/internal/taskops"
	"github.com/agentfleet/agentfleet/internal/tracing"
	"github.com/agentfleet/agentfleet/llm/pricing"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Config configures a Dispatcher. The zero value of every field
// means the default named next to it.
type Config struct {
	// Profiles are the profiles tasks may name (default fleet.KnownProfiles).
	Profiles []string
	// DefaultProfile is used for a spec that names none (default: the
	// first of Profiles).
	DefaultProfile string
	// Queues are the shared queues whose lag /v1/stats and /metrics report
	// (default ["default"]); tasks may still name other queues.
	Queues []string
	// StatsInterval is how often the throughput sampler counts finished tasks
	// (default 5 s); StatsWindow how far back the throughput looks (default 1 min).
	StatsInterval time.Duration
	StatsWindow   time.Duration
	// ScheduleInterval is how often the dispatcher looks for due cron
	// schedules (schedules.go); 0 is DefaultScheduleInterval, < 0 fires
	// none.
	ScheduleInterval time.Duration
	// Forges are the forges whose webhooks POST /v1/forges/{name}/events
	// takes (forges.go), by name.
	Forges map[string]ForgeConfig
	// DefaultLimits fill the zero limits of a submitted task (default
	// fleet.DefaultLimits; NoDefaultLimits leaves them unbounded).
	DefaultLimits   fleet.Limits
	NoDefaultLimits bool
	// Policy bounds what a spec may ask for (limits, session settings): a
	// spec beyond it is refused with a field error naming the bound.
	Policy fleet.Policy
	// Permissions is the operator's permission policy as the workers apply
	// it (their permissions setting); when set, a submitted spec whose
	// permissions widen it is refused with a 400 naming the field. Nil
	// leaves that check to the workers, which fail such a task.
	Permissions *permission.Policy
	// ApprovalSweep is how often calls pending approval past their expiry
	// are denied (default 1 min).
	ApprovalSweep time.Duration
	// Credentials lists the delivery credentials references the workers
	// hold; a submission naming another is refused (empty: not checked).
	Credentials fleet.KnownCredentials
	// GitStore is the fleet git store (gitstore.go); its zero value serves none.
	GitStore GitStoreConfig
	// BudgetCheckInterval is how often budgets are checked against spend
	// (default DefaultBudgetCheckInterval; see fleet/budget).
	BudgetCheckInterval time.Duration
	// SandboxBound, when set, is the widest sandbox a submitted spec may
	// ask for (its sandbox field); a wider one is refused with a FieldError.
	SandboxBound *fleet.SandboxBound
	// SandboxLimits bound a submitted spec's sandbox.limits (a larger
	// one is refused with a FieldError), as the workers' sandbox_limits
	// bound them; zero fields take fleet.DefaultSandboxLimits'.
	SandboxLimits fleet.SandboxLimits
	// ControlTimeout bounds a control request to a session (default
	// queue.DefaultControlTimeout).
	ControlTimeout time.Duration
	// Logger receives the dispatcher's logs (default slog.Default()).
	Logger *slog.Logger
	// Webhooks post each task's end to URLs (package webhook); none
	// without URLs.
	Webhooks webhook.Config
	// Prices overrides or adds model prices on top of llm/pricing's
	// built-in table, as the workers' prices setting does (keep the two
	// alike): a task with a cost limit or a budgeted label whose model
	// has no price is refused (see prices.go).
	Prices map[string]pricing.Price
	// AuditRetention is how long audit log entries are kept (default
	// DefaultAuditRetention; negative: for ever) unless
	// Retention.Default.Audit says otherwise; a tenant's own window is
	// Retention.Tenants[t].Audit (audit_retention.go).
	AuditRetention time.Duration
	// Retention is how long the history of ended tasks is kept, per
	// tenant (retention.go); the zero value keeps everything.
	Retention Retention
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if len(c.Profiles) == 0 {
		c.Profiles = fleet.KnownProfiles
	}
	if c.DefaultProfile == "" {
		c.DefaultProfile = c.Profiles[0]
	}
	if len(c.Queues) == 0 {
		c.Queues = []string{fleet.DefaultQueue}
	}
	if c.DefaultLimits == (fleet.Limits{}) && !c.NoDefaultLimits {
		c.DefaultLimits = fleet.DefaultLimits
	}
	if c.StatsInterval == 0 {
		c.StatsInterval = 5 * time.Second
	}
	if c.StatsWindow == 0 {
		c.StatsWindow = time.Minute
	}
	if c.ApprovalSweep == 0 {
		c.ApprovalSweep = time.Minute
	}
	if c.BudgetCheckInterval == 0 {
		c.BudgetCheckInterval = DefaultBudgetCheckInterval
	}
	if c.ControlTimeout == 0 {
		c.ControlTimeout = queue.DefaultControlTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.AuditRetention == 0 {
		c.AuditRetention = DefaultAuditRetention
	}
	c.Retention = c.Retention.WithDefaults()
	return c
}

// Validate reports every invalid field (errors.Join), naming each by its
// configuration key as `dispatcher serve` reads it (profiles,
// default_profile, queues, policy, approval_sweep,
// budget_check_interval); the fields serve does not read are named the
// same way (stats_interval, stats_window, control_timeout). It is meant
// for a Config with its defaults (New applies them first).
func (c Config) Validate() error {
	var errs []error
	check := func(ok bool, format string, a ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, a...))
		}
	}
	check(slices.Contains(c.Profiles, c.DefaultProfile), "default_profile %q must be one of profiles %v", c.DefaultProfile, c.Profiles)
	for _, q := range c.Queues {
		check(queue.CheckQueueName(q) == nil, "queues entry %q must be letters, digits, '-' or '_' and not \"worker\"", q)
	}
	check(c.StatsInterval >= 0, "stats_interval must be >= 0, got %s", c.StatsInterval)
	check(c.StatsWindow >= c.StatsInterval, "stats_window (%s) must be at least stats_interval (%s)", c.StatsWindow, c.StatsInterval)
	check(c.ApprovalSweep >= 0, "approval_sweep must be >= 0, got %s", c.ApprovalSweep)
	check(c.BudgetCheckInterval >= 0, "budget_check_interval must be >= 0, got %s", c.BudgetCheckInterval)
	check(c.ControlTimeout >= 0, "control_timeout must be >= 0, got %s", c.ControlTimeout)
	if err := c.Policy.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("policy.%w", err))
	}
	if _, err := pricing.Override(nil, c.Prices); err != nil {
		errs = append(errs, err)
	}
	check(c.AuditRetention <= 0 || c.AuditRetention >= c.Retention.Floor,
		"audit_retention is %s, shorter than retention.floor (%s): raise it or lower the floor", c.AuditRetention, c.Retention.Floor)
	if err := c.Retention.Validate(); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, validateForges(c.Forges)...)
	return errors.Join(errs...)
}

// Dispatcher is the service behind the HTTP API: it validates and stores
// submitted tasks and enqueues them, cancels subtrees, relays control to
// running sessions, turns dead letters into failed tasks and keeps the
// statistics. It is safe for concurrent use. The caller owns the store and
// the queue client and closes them after Run has returned.
type Dispatcher struct {
	store    store.Store
	queue    *queue.Client
	cfg      Config
	log      *slog.Logger
	metrics  *Metrics
	stats    *throughput
	budgets  budgets
	ends     *taskops.Completer // every end of a task the dispatcher writes
	webhooks *webhook.Notifier  // nil without webhook URLs
	prices   pricing.Table      // built-in prices with Config.Prices on top
	// health logs the store going away and coming back, once each; Run
	// pings it while it is away.
	health *storegate.Health
	bulk   *bulkJobs // progress of bulk actions (bulk.go)
	sweep  *sweeper  // retention (retention.go)
	// holds are the fleet's pauses, opened by the first to need them
	// (pause.go).
	holdsMu sync.Mutex
	holds   *holds.Set
	// forgeChecks are the conflict checks in flight (forges_follow.go);
	// Run waits for them.
	forgeChecks sync.WaitGroup
	git         lazyGitStore // the fleet git store (gitstore.go), made on first use
}

// New returns a Dispatcher over st and q.
func New(st store.Store, q *queue.Client, cfg Config) (*Dispatcher, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if st == nil || q == nil {
		return nil, errors.New("dispatcher: New needs a store and a queue client")
	}
	d := &Dispatcher{store: st, queue: q, cfg: cfg, log: cfg.Logger, stats: newThroughput(cfg.StatsWindow)}
	warnForges(d.log, cfg.Forges)
	d.prices, _ = pricing.Override(pricing.Builtin(), cfg.Prices) // validated above
	d.metrics = newMetrics(d)
	d.bulk, d.sweep = newBulkJobs(), newSweeper(d)
	d.health = storegate.NewHealth(st, d.log, d.metrics.storeUp,
		"API calls that need it answer 503 with Retry-After", "API calls are served again")
	d.ends = &taskops.Completer{Store: st, Queue: q, Log: d.log, AbortTimeout: cfg.ControlTimeout,
		Ended: func(s store.TaskState) { d.metrics.finished.WithLabelValues(string(s)).Inc() }}
	if cfg.Webhooks.Enabled() {
		var err error
		if d.webhooks, err = webhook.New(cfg.Webhooks, q, cfg.Logger.With("component", "webhook")); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Config returns the configuration with its defaults.
func (d *Dispatcher) Config() Config { return d.cfg }

// Metrics returns the dispatcher's Prometheus metrics.
func (d *Dispatcher) Metrics() *Metrics { return d.metrics }

// Run handles dead letters, samples throughput and enforces budgets until ctx ends.
func (d *Dispatcher) Run(ctx context.Context) error {
	w, err := d.queue.WatchDeadLetters(ctx, taskops.HandleDeadLetter(d.ends, d.metrics.deadLetters.Inc))
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("dispatcher: watch dead letters: %w", err)
	}
	defer w.Stop()
	defer d.forgeChecks.Wait()
	go d.health.Watch(ctx)
	if stopLeaders, err := d.queue.LogStreamLeaders(d.log); err != nil {
		d.log.Warn("not logging NATS stream leader changes", "err", err)
	} else {
		defer func() { _ = stopLeaders() }()
	}
	stopHolds, err := d.runHolds(ctx) // pause.go
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	defer stopHolds()
	stopApprovals, err := d.serveApprovals()
	if err != nil {
		return fmt.Errorf("dispatcher: %w", err)
	}
	defer func() { _ = stopApprovals() }()
	stopSweep := d.sweepApprovals(ctx)
	defer stopSweep()
	budgetsDone := make(chan struct{})
	go func() { defer close(budgetsDone); d.runBudgets(ctx) }()
	defer func() { <-budgetsDone }()
	sweepDone := make(chan struct{})
	go func() { defer close(sweepDone); d.sweep.run(ctx, d.log.Warn) }()
	defer func() { <-sweepDone }()
	auditDone := make(chan struct{})
	go func() { defer close(auditDone); d.pruneAudit(ctx) }()
	defer func() { <-auditDone }()
	gitDone := make(chan struct{})
	go func() { defer close(gitDone); d.pruneGitStore(ctx) }() // gitstore_lease.go
	defer func() { <-gitDone }()
	if d.webhooks != nil {
		stop := d.runWebhooks(ctx)
		defer stop()
	}
	schedDone := make(chan struct{})
	go func() { defer close(schedDone); d.runSchedules(ctx) }()
	defer func() { <-schedDone }()
	tick := time.NewTicker(d.cfg.StatsInterval)
	defer tick.Stop()
	for {
		d.sample(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

func (d *Dispatcher) sample(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.StatsInterval)
	defer cancel()
	counts, err := d.store.CountTasks(ctx, store.CountTasksParams{})
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("count tasks for throughput", "err", err)
		}
		return
	}
	d.stats.add(time.Now(), counts)
}

// Submission is one submitted task: the stored task, and whether its
// idempotency key matched a task submitted earlier.
type Submission struct {
	Task     store.Task
	Existing bool
}

// BatchError is a submission refused because of one task of a batch.
type BatchError struct {
	Index int
	Err   *fleet.FieldError // its field path starts with "tasks[<Index>]"
}

func (e *BatchError) Error() string { return e.Err.Error() }

// Unwrap returns the field error.
func (e *BatchError) Unwrap() error { return e.Err }

// EnqueueError reports tasks that were stored but could not be enqueued.
// They stay queued; submitting them again with the same idempotency keys
// enqueues them (the message ids make it happen once).
type EnqueueError struct {
	TaskIDs []uuid.UUID
	Err     error
}

func (e *EnqueueError) Error() string {
	return fmt.Sprintf("%d task(s) stored but not enqueued (first %s): %v; submit again with the same idempotency keys to enqueue them",
		len(e.TaskIDs), e.TaskIDs[0], e.Err)
}

func (e *EnqueueError) Unwrap() error { return e.Err }

// prepare fills the defaults of a submitted spec (fleet.Defaults, once)
// and checks it. Every error is returned: a *fleet.FieldError names the
// field at fault; any other error means the spec could not be checked.
func (d *Dispatcher) prepare(s fleet.TaskSpec) (store.CreateTaskParams, error) {
	s = fleet.Defaults{Profile: d.cfg.DefaultProfile, Limits: d.cfg.DefaultLimits, Policy: d.cfg.Policy}.Apply(s)
	if err := s.ValidateSubmission(d.cfg.Profiles...); err != nil {
		return store.CreateTaskParams{}, err
	}
	if err := d.cfg.Policy.Check(s); err != nil {
		return store.CreateTaskParams{}, err
	}
	if d.cfg.Permissions != nil {
		if fe := s.PermissionsWithin(*d.cfg.Permissions); fe != nil {
			return store.CreateTaskParams{}, fe
		}
	}
	if fe := s.CheckCredentials(d.cfg.Credentials); fe != nil {
		return store.CreateTaskParams{}, fe
	}
	if d.cfg.SandboxBound != nil {
		if fe := d.cfg.SandboxBound.Permits(s.Sandbox); fe != nil {
			return store.CreateTaskParams{}, fe
		}
	}
	if fe := d.cfg.SandboxLimits.WithDefaults().Permits(s.Sandbox.Limits); fe != nil {
		return store.CreateTaskParams{}, fe
	}
	raw, err := json.Marshal(s)
	if err != nil { // a fleet.TaskSpec always encodes; keep the error visible anyway
		return store.CreateTaskParams{}, &fleet.FieldError{Field: "spec", Reason: err.Error()}
	}
	return store.CreateTaskParams{
		Queue: s.Queue, Priority: s.Priority, Spec: raw, IdempotencyKey: s.IdempotencyKey, Labels: s.Labels,
		Tenant: s.Tenant,
	}, nil
}

// Submit validates every spec, stores them in one transaction and enqueues
// them: all or nothing. A spec that is not valid is a *BatchError naming its
// index (a single spec keeps the "spec." field prefix); nothing is stored or
// enqueued then. A spec whose idempotency key was seen before yields the
// first task (Existing), enqueued once.
func (d *Dispatcher) Submit(ctx context.Context, specs []fleet.TaskSpec) (_ []Submission, err error) {
	ctx, span := startSubmit(ctx, len(specs))
	defer func() { tracing.Fail(span, err); span.End() }()
	start := time.Now()
	defer func() { d.metrics.submitDuration.Observe(time.Since(start).Seconds()) }()
	if len(specs) == 0 {
		return nil, &BatchError{Index: -1, Err: &fleet.FieldError{Field: "tasks", Reason: "is empty: submit at least one task"}}
	}
	if len(specs) > api.MaxBatch {
		return nil, &BatchError{Index: -1, Err: &fleet.FieldError{Field: "tasks", Reason: fmt.Sprintf("has %d tasks, at most %d are accepted in one batch; split it", len(specs), api.MaxBatch)}}
	}
	params := make([]store.CreateTaskParams, len(specs))
	traces := startTaskTraces(ctx, len(specs))
	defer func() { endTaskTraces(traces, err) }()
	for i, s := range specs {
		s.TraceParent = traces.parent(ctx, i) // the submission's span, or the task's own in a batch
		p, err := d.prepare(s)
		if err == nil {
			err = d.checkPriced(ctx, s)
		}
		if err != nil {
			d.metrics.submitted.WithLabelValues("invalid").Inc()
			return nil, batchError(i, len(specs), err)
		}
		p.SubmittedBy = submitter(ctx)
		params[i] = p
	}
	if err := checkDuplicateKeys(params); err != nil {
		return nil, err
	}
	delayed, err := d.delayStarts(ctx, specs, params) // run_at.go
	if err != nil {
		return nil, err
	}
	res, err := d.store.CreateTasks(ctx, store.CreateTasksParams{Tasks: params})
	if err != nil {
		return nil, fmt.Errorf("dispatcher: store %d task(s): %w", len(params), err)
	}
	subs := make([]Submission, len(res))
	for i, r := range res {
		subs[i] = Submission{Task: r.Task, Existing: r.Existing}
		kind := "created"
		if r.Existing {
			kind = "existing"
		}
		d.metrics.submitted.WithLabelValues(kind).Inc()
	}
	traceSubmitted(span, subs)
	traces.stored(subs)
	return subs, d.enqueue(traces.enqueueContext(ctx), subs, traces, waitingStarts(subs, delayed))
}

// batchError is the error of spec i of a batch of n: a *BatchError for a
// field error, else err naming the spec.
func batchError(i, n int, err error) error {
	var fe *fleet.FieldError
	if !errors.As(err, &fe) {
		return fmt.Errorf("dispatcher: checking tasks[%d]: %w", i, err)
	}
	if n > 1 {
		fe = fe.WithPrefix(fmt.Sprintf("tasks[%d]", i))
	}
	return &BatchError{Index: i, Err: fe}
}

// checkDuplicateKeys refuses a batch that names one idempotency key twice:
// the second would silently become the first.
func checkDuplicateKeys(params []store.CreateTaskParams) error {
	seen := make(map[string]int)
	for i, p := range params {
		if p.IdempotencyKey == "" {
			continue
		}
		if j, ok := seen[p.IdempotencyKey]; ok {
			return &BatchError{Index: i, Err: &fleet.FieldError{
				Field:  fmt.Sprintf("tasks[%d].idempotency_key", i),
				Reason: fmt.Sprintf("%q is also the key of tasks[%d]; keys must be unique within a batch", p.IdempotencyKey, j),
			}}
		}
		seen[p.IdempotencyKey] = i
	}
	return nil
}

// enqueue publishes a start message for every new task and for every
// existing one still queued (its first enqueue may have failed), but
// those whose start waits for its run_at (run_at.go), all asynchronously
// and confirmed together (queue.Client.SendBatch). The message id
// "start:<task>" makes a repeated publish a duplicate.
func (d *Dispatcher) enqueue(ctx context.Context, subs []Submission, traces taskTraces, waiting map[uuid.UUID]bool) error {
	msgs := make([]queue.Outgoing, 0, len(subs))
	for i, s := range subs {
		if (s.Existing && s.Task.State != store.TaskQueued) || waiting[s.Task.ID] {
			continue
		}
		msgs = append(msgs, traces.start(i, taskops.StartMessage(s.Task, s.Task.CreatedAt)))
	}
	var failed []uuid.UUID
	var firstErr error
	for i, r := range d.queue.SendBatch(ctx, msgs) {
		if r.Err != nil {
			id, _ := uuid.Parse(msgs[i].Msg.TaskID)
			failed = append(failed, id)
			if firstErr == nil {
				firstErr = r.Err
			}
		}
	}
	if len(failed) > 0 {
		d.metrics.enqueueErrors.Add(float64(len(failed)))
		return &EnqueueError{TaskIDs: failed, Err: firstErr}
	}
	return nil
}

// CancelResult reports a cancellation: the cancelled tasks, and how many
// running sessions acknowledged their abort (the others stop when their
// worker next writes to the store and finds the task cancelled).
type CancelResult struct {
	Cancelled []store.CancelledTask
	Aborted   int
}

// ErrAlreadyFinished is returned by Cancel for a finished task with no
// live descendant.
var ErrAlreadyFinished = errors.New("dispatcher: task already finished")

// Cancel cancels a task and its whole subtree: queued and waiting tasks never
// start again (a worker's claim is a compare-and-set on the state), running
// ones are aborted over their control subject.
func (d *Dispatcher) Cancel(ctx context.Context, id uuid.UUID, reason string) (CancelResult, error) {
	t, err := d.store.GetTask(ctx, store.GetTaskParams{ID: id})
	if err != nil {
		return CancelResult{}, err
	}
	if reason == "" {
		reason = "cancelled"
	}
	res, err := d.ends.CancelTree(ctx, id, reason)
	if err != nil {
		return CancelResult{}, err
	}
	if len(res.Tasks) == 0 && t.State.Terminal() {
		return CancelResult{}, fmt.Errorf("%w: task %s is %s", ErrAlreadyFinished, id, t.State)
	}
	if res.AbortErr != nil {
		d.log.Warn("aborting cancelled tasks", "task", id, "err", res.AbortErr)
	}
	d.metrics.cancelled.Add(float64(len(res.Tasks)))
	return CancelResult{Cancelled: res.Tasks, Aborted: res.Aborted}, nil
}

// ErrTaskNotRunning: the task is not running, so no session can take
// control requests.
var ErrTaskNotRunning = errors.New("dispatcher: task is not running")

// Control sends req to the session running task id. A task that is not
// running is ErrTaskNotRunning; a session that no worker serves is
// queue.ErrNotRunning; a refusal by the session wraps queue.ErrControlRefused.
func (d *Dispatcher) Control(ctx context.Context, id uuid.UUID, req queue.ControlRequest) (queue.ControlReply, error) {
	t, err := d.store.GetTask(ctx, store.GetTaskParams{ID: id})
	if err != nil {
		return queue.ControlReply{}, err
	}
	if t.State != store.TaskRunning {
		return queue.ControlReply{}, fmt.Errorf("%w: task %s is %s; %s", ErrTaskNotRunning, id, t.State, notRunningHint(t.State))
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.ControlTimeout)
	defer cancel()
	reply, err := d.queue.Control(ctx, fleet.SessionTenant(t), fleet.SessionSubject(id), req)
	d.metrics.control.WithLabelValues(string(req.Op), controlOutcome(err)).Inc()
	return reply, err
}

func notRunningHint(s store.TaskState) string {
	switch s {
	case store.TaskQueued:
		return "wait until a worker starts it (GET the task or follow its events)"
	case store.TaskWaiting:
		return "it is parked waiting for its subagents and takes input again when it resumes"
	case store.TaskSucceeded, store.TaskFailed:
		return "it has finished; POST follow_up with a new input reopens it"
	}
	return "it was cancelled, which is final; submit a new task to continue the work"
}

func controlOutcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, queue.ErrNotRunning):
		return "not_running"
	case errors.Is(err, queue.ErrControlRefused):
		return "refused"
	}
	return "error"
}
