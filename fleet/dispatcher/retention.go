package dispatcher

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/store"
)

// Retention deletes the history of ended tasks (turns, tool outputs,
// artifacts) once it is older than its tenant's policy, measured from the
// task's end. The sweeper runs every Retention.Interval: for each kind
// and each policy it deletes in batches of Retention.Batch rows, one
// short statement each (store.Sweeper), until a batch comes back short;
// the store is never held for a whole sweep.
//
// Decisions where the issue is silent:
//
//   - The default policy keeps everything (zero windows): retention
//     deletes data, so an operator turns it on (Retention.Default, or per
//     tenant in Retention.Tenants). A tenant's zero field takes the
//     default's; a negative one keeps that kind for ever in that tenant.
//   - The floor: a task whose tree still has a live task (queued,
//     running, waiting) keeps everything, whatever its age; and no window
//     may be shorter than Retention.Floor (default 1 h), so a typo cannot
//     delete what a user is still reading.
//   - Sessions (usage and cost), tasks and results are not history and
//     are never swept; neither is the newest artifact of a kind and name
//     (a repository's notes, see store.SweepParams).
//   - The audit log has its own window, Audit, measured from each entry's
//     time, not a task's end, and pruned hourly by Run rather than by this
//     sweeper (audit_retention.go). Unlike the other windows it has a
//     default even when nothing is set: retention.default.audit, else the
//     fleet-wide Config.AuditRetention (audit_retention, 90 days). A
//     tenant's zero Audit takes that default, a negative one keeps its
//     entries for ever; entries with no tenant (fleet-wide admin calls,
//     calls whose tenant was never learnt) follow the default. The floor
//     applies to it as to the other windows.
//   - Events are in the EVENTS stream, whose max age (queue config) stays
//     their fleet-wide bound. A tenant's Events window goes further: once
//     a tree's root ended that long ago and no task of the tree is live,
//     the tree's events are purged by subject
//     (<prefix>.events.<tenant>.<root>.>), all at once, so a replay
//     never shows half a tree (retention_events.go). A purge by subject
//     rather than a stream per tenant: one stream keeps one set of
//     consumers, permissions and limits, and JetStream has no per-subject
//     max age.
//
// A follow-up on a task whose turns were swept starts a session without
// the swept history.

// DefaultRetentionFloor is the shortest retention window allowed.
const DefaultRetentionFloor = time.Hour

// RetentionPolicy is how long each kind of history is kept after a task
// ends; 0 takes the default policy's (which, 0 again, keeps for ever);
// negative keeps for ever.
type RetentionPolicy struct {
	Turns       time.Duration `mapstructure:"turns"`
	ToolOutputs time.Duration `mapstructure:"tool_outputs"`
	Artifacts   time.Duration `mapstructure:"artifacts"`
	// Events is how long a tree's events stay in EVENTS after its root
	// ended (retention_events.go); the stream's max age bounds it.
	Events time.Duration `mapstructure:"events"`
	// Audit is how long audit log entries of the tenant are kept after
	// they were written (audit_retention.go); 0 in the default policy
	// takes Config.AuditRetention.
	Audit time.Duration `mapstructure:"audit"`
}

func (p RetentionPolicy) window(k store.RetentionKind) time.Duration {
	switch k {
	case store.RetainTurns:
		return p.Turns
	case store.RetainToolOutputs:
		return p.ToolOutputs
	}
	return p.Artifacts
}

// namedWindow is one window of a policy and its configuration key.
type namedWindow struct {
	name string
	w    time.Duration
}

// named lists p's windows by their configuration keys: the store's
// kinds, then events and audit.
func (p RetentionPolicy) named() []namedWindow {
	out := make([]namedWindow, 0, len(store.RetentionKinds)+2)
	for _, k := range store.RetentionKinds {
		out = append(out, namedWindow{string(k), p.window(k)})
	}
	return append(out, namedWindow{"events", p.Events}, namedWindow{"audit", p.Audit})
}

// over returns p with its zero fields taken from def.
func (p RetentionPolicy) over(def RetentionPolicy) RetentionPolicy {
	for _, f := range []struct {
		dst *time.Duration
		src time.Duration
	}{
		{&p.Turns, def.Turns}, {&p.ToolOutputs, def.ToolOutputs}, {&p.Artifacts, def.Artifacts}, {&p.Events, def.Events},
		{&p.Audit, def.Audit},
	} {
		if *f.dst == 0 {
			*f.dst = f.src
		}
	}
	return p
}

// Retention configures the sweeper; the zero value keeps everything.
type Retention struct {
	Default RetentionPolicy            `mapstructure:"default"`
	Tenants map[string]RetentionPolicy `mapstructure:"tenants"`
	// Floor is the shortest window allowed (default DefaultRetentionFloor).
	Floor time.Duration `mapstructure:"floor"`
	// Interval is the time between sweeps (default 10 min); Batch the rows
	// deleted per statement (default 1000, at most 10000).
	Interval time.Duration `mapstructure:"interval"`
	Batch    int           `mapstructure:"batch"`
}

// WithDefaults fills the zero fields.
func (r Retention) WithDefaults() Retention {
	if r.Floor == 0 {
		r.Floor = DefaultRetentionFloor
	}
	if r.Interval == 0 {
		r.Interval = 10 * time.Minute
	}
	if r.Batch == 0 {
		r.Batch = 1000
	}
	return r
}

// Validate names each window under the floor, by its configuration key.
func (r Retention) Validate() error {
	var errs []error
	check := func(key string, p RetentionPolicy) {
		for _, f := range p.named() {
			if f.w > 0 && f.w < r.Floor {
				errs = append(errs, fmt.Errorf("%s.%s is %s, shorter than retention.floor (%s): raise it or lower the floor", key, f.name, f.w, r.Floor))
			}
		}
	}
	check("retention.default", r.Default)
	for _, t := range slices.Sorted(maps.Keys(r.Tenants)) {
		check("retention.tenants."+t, r.Tenants[t])
	}
	if r.Interval < 0 {
		errs = append(errs, fmt.Errorf("retention.interval must be >= 0, got %s", r.Interval))
	}
	if r.Batch < 1 || r.Batch > 10000 {
		errs = append(errs, fmt.Errorf("retention.batch must be from 1 to 10000, got %d", r.Batch))
	}
	return errors.Join(errs...)
}

// sweeper runs the retention sweeps and counts what they delete.
type sweeper struct {
	cfg     Retention
	store   store.Sweeper // nil when the store cannot sweep
	deleted *prometheus.CounterVec
	events  eventTrees // nil without a queue
	tasks   store.Store
	mu      sync.Mutex // held by an events sweep
	cursor  string     // the last tree the events sweep looked at: tenant/root
}

func newSweeper(d *Dispatcher) *sweeper {
	s := &sweeper{cfg: d.cfg.auditRetention(), deleted: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agentfleet_retention_rows_deleted_total",
		Help: "Rows of ended tasks' history deleted by retention, by kind: turns, tool_outputs, artifacts, events (messages purged from EVENTS).",
	}, []string{"kind"}), tasks: d.store}
	s.store, _ = d.store.(store.Sweeper)
	if d.queue != nil {
		s.events = d.queue
	}
	for _, k := range store.RetentionKinds {
		s.deleted.WithLabelValues(string(k))
	}
	s.deleted.WithLabelValues(string(eventsKind))
	d.metrics.Registry.MustRegister(s.deleted)
	return s
}

// run sweeps every interval until ctx ends.
func (s *sweeper) run(ctx context.Context, log func(msg string, args ...any)) {
	if s.store == nil && s.events == nil || !s.enabled() {
		return
	}
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		if err := s.sweep(ctx, time.Now()); err != nil && ctx.Err() == nil {
			log("retention sweep", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// enabled reports whether some policy sets a window the sweeper sweeps.
func (s *sweeper) enabled() bool {
	return s.anyPolicy(func(p RetentionPolicy) bool {
		return p.Events > 0 || slices.ContainsFunc(store.RetentionKinds, func(k store.RetentionKind) bool { return p.window(k) > 0 })
	})
}

// anyPolicy reports whether f holds of the default policy or of a
// tenant's own.
func (s *sweeper) anyPolicy(f func(RetentionPolicy) bool) bool {
	if f(s.cfg.Default) {
		return true
	}
	for _, p := range s.cfg.Tenants {
		if f(p) {
			return true
		}
	}
	return false
}

// sweep deletes, as of now, what every policy lets go, and returns the
// first error (the other sweeps still run).
func (s *sweeper) sweep(ctx context.Context, now time.Time) error {
	errs := []error{s.sweepEvents(ctx, now)}
	if s.store == nil {
		return errors.Join(errs...)
	}
	own := slices.Sorted(maps.Keys(s.cfg.Tenants))
	for _, k := range store.RetentionKinds {
		for _, t := range own {
			if w := s.cfg.Tenants[t].over(s.cfg.Default).window(k); w > 0 {
				errs = append(errs, s.drain(ctx, store.SweepParams{Kind: k, EndedBefore: now.Add(-w), Tenants: []string{t}, Limit: s.cfg.Batch}))
			}
		}
		if w := s.cfg.Default.window(k); w > 0 {
			errs = append(errs, s.drain(ctx, store.SweepParams{Kind: k, EndedBefore: now.Add(-w), ExceptTenants: own, Limit: s.cfg.Batch}))
		}
	}
	return errors.Join(errs...)
}

// drain sweeps p in batches until one comes back short.
func (s *sweeper) drain(ctx context.Context, p store.SweepParams) error {
	for {
		n, err := s.store.Sweep(ctx, p)
		s.deleted.WithLabelValues(string(p.Kind)).Add(float64(n))
		if err != nil || n < int64(p.SweepLimit()) {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// view is the policy as GET /v1/retention shows it to a principal that
// sees tenants (nil: every tenant).
func (s *sweeper) view(tenants []string) api.RetentionView {
	conv := func(p RetentionPolicy) api.RetentionPolicy {
		return api.RetentionPolicy{Turns: fleet.Duration(p.Turns), ToolOutputs: fleet.Duration(p.ToolOutputs),
			Artifacts: fleet.Duration(p.Artifacts), Events: fleet.Duration(p.Events), Audit: fleet.Duration(p.Audit)}
	}
	v := api.RetentionView{Default: conv(s.cfg.Default), Tenants: map[string]api.RetentionPolicy{},
		Floor: fleet.Duration(s.cfg.Floor), Interval: fleet.Duration(s.cfg.Interval), Deleted: map[string]int64{},
		Events: s.eventsView(tenants)}
	for t, p := range s.cfg.Tenants {
		if tenants == nil || slices.Contains(tenants, t) {
			v.Tenants[t] = conv(p.over(s.cfg.Default))
		}
	}
	for _, k := range append(slices.Clone(store.RetentionKinds), eventsKind) {
		var m dto.Metric
		if s.deleted.WithLabelValues(string(k)).Write(&m) == nil {
			v.Deleted[string(k)] = int64(m.GetCounter().GetValue())
		}
	}
	return v
}
