package worker

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfleet/agentfleet/llm"
)

// metrics are the worker's Prometheus metrics (docs/metrics.md lists them),
// all prefixed agentfleet_worker_.
type metrics struct {
	tasks           *prometheus.CounterVec // by final state
	claimLatency    prometheus.Histogram
	sessionDuration prometheus.Histogram
	sessionsRunning prometheus.Gauge
	turns           prometheus.Counter
	llmRequests     *prometheus.CounterVec // provider, model, outcome
	llmLatency      *prometheus.HistogramVec
	llmTokens       *prometheus.CounterVec // provider, model, direction
	toolCalls       *prometheus.CounterVec // tool, is_error
	toolDuration    *prometheus.HistogramVec
	retries         prometheus.Counter
	naks            prometheus.Counter
	parks           prometheus.Counter
	resumes         prometheus.Counter
	spawns          prometheus.Counter
	events          prometheus.Counter
	storeRetries    prometheus.Counter
	storeUp         prometheus.Gauge
	deadLetters     prometheus.Counter
	denials         *prometheus.CounterVec // tool, rule
	approvals       prometheus.Counter
	limitHits       *prometheus.CounterVec // limit: pids, memory, cpu
	unpricedCalls   *prometheus.CounterVec // model (unpriced.go)
}

func newMetrics(reg prometheus.Registerer, w *Worker) (*metrics, error) {
	const ns, sub = "agentfleet", "worker"
	cl := prometheus.Labels{"worker": w.cfg.ID}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help, ConstLabels: cl})
	}
	m := &metrics{
		tasks: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "tasks_finished_total",
			Help: "Tasks this worker brought to a final state, by state.", ConstLabels: cl}, []string{"state"}),
		claimLatency: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "claim_latency_seconds",
			Help: "Time from a task message being stored to its claim.", ConstLabels: cl, Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}),
		sessionDuration: prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "session_duration_seconds",
			Help: "Duration of one run of a session (claim to settle).", ConstLabels: cl, Buckets: prometheus.ExponentialBuckets(0.01, 4, 10)}),
		sessionsRunning: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "sessions_running",
			Help: "Sessions running now.", ConstLabels: cl}),
		turns: counter("turns_recorded_total", "Turns written to the store."),
		llmRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "llm_requests_total",
			Help: "Model calls by provider, model and outcome (ok or the error kind).", ConstLabels: cl}, []string{"provider", "model", "outcome"}),
		llmLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "llm_latency_seconds",
			Help: "Model call latency.", ConstLabels: cl, Buckets: prometheus.ExponentialBuckets(0.01, 3, 10)}, []string{"provider", "model"}),
		llmTokens: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "llm_tokens_total",
			Help: "Tokens by provider, model and direction (input, output, reasoning, cache_read, cache_write; input includes both cache kinds).", ConstLabels: cl}, []string{"provider", "model", "direction"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "tool_calls_total",
			Help: "Tool calls by tool and whether they returned an error result.", ConstLabels: cl}, []string{"tool", "is_error"}),
		toolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "tool_duration_seconds",
			Help: "Tool call duration.", ConstLabels: cl, Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"tool"}),
		retries: counter("retries_total", "Retryable model failures handed back to the queue."),
		naks:    counter("naks_total", "Task messages handed back for redelivery."),
		parks:   counter("parks_total", "Sessions parked waiting for subagents."),
		resumes: counter("resumes_enqueued_total", "Resumes of parked parents enqueued (duplicates excluded)."),
		spawns:  counter("spawns_total", "Subagent tasks created and enqueued."),
		events:  counter("events_total", "Session events handed to the publisher."),
		storeRetries: counter("store_retries_total",
			"Store calls retried after a temporary failure (the backend away or restarting)."),
		storeUp: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "store_up",
			Help: "1 while the store answers, 0 while the worker waits for it (and pulls nothing).", ConstLabels: cl}),
		deadLetters: counter("dead_letters_total",
			"Task messages this worker's dead-letter watcher handled (tasks failed as dead_letter)."),
		denials: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "permission_denials_total",
			Help: "Tool calls the permission policy or a person refused, by tool and the rule that decided.", ConstLabels: cl}, []string{"tool", "rule"}),
		approvals: counter("approvals_requested_total", "Tool calls that parked their session for a person's approval."),
		limitHits: newLimitHits(cl),
	}
	m.unpricedCalls = newUnpricedCalls(cl)
	qm := w.q.Metrics()
	fromQueue := func(name, help string, v func() uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: name, Help: help, ConstLabels: cl},
			func() float64 { return float64(v()) })
	}
	cs := []prometheus.Collector{m.tasks, m.claimLatency, m.sessionDuration, m.sessionsRunning, m.turns, m.llmRequests,
		m.llmLatency, m.llmTokens, m.toolCalls, m.toolDuration, m.retries, m.naks, m.parks, m.resumes, m.spawns, m.events,
		m.storeRetries, m.storeUp, m.deadLetters, m.denials, m.approvals, m.limitHits, m.unpricedCalls,
		fromQueue("redeliveries_total", "Task messages delivered more than once.", qm.Redelivered.Load),
		fromQueue("events_published_total", "Events the EVENTS stream acknowledged.", qm.EventsPublished.Load),
		fromQueue("event_publish_failures_total",
			"Event publishes the EVENTS stream did not acknowledge (each is retried until it is stored).", qm.EventsFailed.Load),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "slots_in_use",
			Help: "Session slots held: running sessions plus slots reserved by pulls waiting for messages (see sessions_running).", ConstLabels: cl}, func() float64 { return float64(w.slots.InUse()) }),
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// observeLLM records one model call.
func (m *metrics) observeLLM(provider, model string, d time.Duration, resp *llm.Response, err error) {
	outcome := "ok"
	if err != nil {
		outcome = string(llm.KindOf(err))
		if _, ok := errors.AsType[*llm.Error](err); !ok {
			outcome = "error"
		}
	}
	m.llmRequests.WithLabelValues(provider, model, outcome).Inc()
	m.llmLatency.WithLabelValues(provider, model).Observe(d.Seconds())
	if resp != nil {
		m.llmTokens.WithLabelValues(provider, model, "input").Add(float64(resp.Usage.InputTokens))
		m.llmTokens.WithLabelValues(provider, model, "output").Add(float64(resp.Usage.OutputTokens))
		m.llmTokens.WithLabelValues(provider, model, "reasoning").Add(float64(resp.Usage.ReasoningTokens))
		m.llmTokens.WithLabelValues(provider, model, "cache_read").Add(float64(resp.Usage.CacheReadTokens))
		m.llmTokens.WithLabelValues(provider, model, "cache_write").Add(float64(resp.Usage.CacheWriteTokens))
	}
}
