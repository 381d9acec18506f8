package dispatcher

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// Metrics are the dispatcher's Prometheus metrics, on a registry
// of their own (Registry) so that several dispatchers can live in one
// process. docs/metrics.md lists them.
type Metrics struct {
	Registry *prometheus.Registry

	submitted      *prometheus.CounterVec // by result: created, existing, invalid
	submitDuration prometheus.Histogram
	enqueueErrors  prometheus.Counter
	cancelled      prometheus.Counter
	control        *prometheus.CounterVec // by op and outcome
	deadLetters    prometheus.Counter
	finished       *prometheus.CounterVec // by final state
	approvals      *prometheus.CounterVec // by decision: approve, deny, expired
	storeUp        prometheus.Gauge
	http           httpMetrics
}

// httpMetrics are the metrics the HTTP handlers feed.
type httpMetrics struct {
	latency    *prometheus.HistogramVec // by method, route and code
	streams    prometheus.Gauge         // event streams open
	eventsSent prometheus.Counter       // events written to streams
	invalid    prometheus.Counter       // submissions refused before reaching the service
}

// scrapeTimeout bounds the store and NATS reads of one scrape.
const scrapeTimeout = 5 * time.Second

func newMetrics(d *Dispatcher) *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		submitted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentfleet_dispatcher_tasks_submitted_total",
			Help: "Tasks submitted, by result: created, existing (a repeated idempotency key) or invalid.",
		}, []string{"result"}),
		submitDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "agentfleet_dispatcher_submit_duration_seconds",
			Help:    "Time to validate, store and enqueue one submission (a task or a batch).",
			Buckets: prometheus.ExponentialBuckets(0.001, 2, 16),
		}),
		enqueueErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentfleet_dispatcher_enqueue_errors_total",
			Help: "Stored tasks whose start message could not be published.",
		}),
		cancelled: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentfleet_dispatcher_tasks_cancelled_total",
			Help: "Tasks cancelled through the API, descendants included.",
		}),
		control: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentfleet_dispatcher_control_requests_total",
			Help: "Control requests relayed to sessions, by op and outcome (ok, not_running, refused, error).",
		}, []string{"op", "outcome"}),
		deadLetters: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentfleet_dispatcher_dead_letters_total",
			Help: "Tasks moved to failed with the reason dead_letter.",
		}),
		finished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentfleet_dispatcher_tasks_finished_total",
			Help: "Tasks the dispatcher brought to a final state (cancels, dead letters), by state; the workers count the rest.",
		}, []string{"state"}),
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "agentfleet_dispatcher_approvals_answered_total",
			Help: "Tool calls pending approval that were answered, by decision: approve, deny, or expired (denied unanswered).",
		}, []string{"decision"}),
		storeUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentfleet_dispatcher_store_up",
			Help: "1 while the store answers the dispatcher, 0 from a call it did not answer until a ping succeeds.",
		}),
	}
	m.http = httpMetrics{
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "agentfleet_api_request_duration_seconds",
			Help:    "HTTP API latency by method, route pattern and status code (event streams: until the stream ends).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18),
		}, []string{"method", "route", "code"}),
		streams: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "agentfleet_api_event_streams",
			Help: "Server-Sent Event streams open now.",
		}),
		eventsSent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "agentfleet_api_events_sent_total",
			Help: "Events written to Server-Sent Event streams.",
		}),
	}
	m.http.invalid = m.submitted.WithLabelValues("invalid")
	m.Registry.MustRegister(m.submitted, m.submitDuration, m.enqueueErrors, m.cancelled, m.finished, m.control,
		m.deadLetters, m.approvals, m.storeUp, m.http.latency, m.http.streams, m.http.eventsSent,
		&stateCollector{d: d}, newQueueCollector(d),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	registerQueueCounters(m.Registry, d.queue.Metrics())
	return m
}

// registerQueueCounters exports the queue client's counters.
func registerQueueCounters(r *prometheus.Registry, qm *queue.Metrics) {
	for name, c := range map[string]interface{ Load() uint64 }{
		"enqueued":           &qm.Enqueued,
		"enqueue_duplicates": &qm.EnqueueDuplicates,
		"dead_letters":       &qm.DeadLetters,
	} {
		r.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "agentfleet_dispatcher_queue_" + name + "_total",
			Help: "Queue client counter " + name + " of this dispatcher.",
		}, func() float64 { return float64(c.Load()) }))
	}
}

// stateCollector reports the number of tasks in each state, read from the
// store at scrape time.
type stateCollector struct{ d *Dispatcher }

var tasksDesc = prometheus.NewDesc("agentfleet_tasks", "Tasks by state (read from the store at scrape time).", []string{"state"}, nil)

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- tasksDesc }

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	counts, err := c.d.store.CountTasks(ctx, store.CountTasksParams{})
	if err != nil {
		ch <- prometheus.NewInvalidMetric(tasksDesc, err)
		return
	}
	for _, s := range store.TaskStates {
		ch <- prometheus.MustNewConstMetric(tasksDesc, prometheus.GaugeValue, float64(counts[s]), string(s))
	}
}

// queueCollector reports the backlog of each configured queue.
type queueCollector struct {
	d                  *Dispatcher
	pending, inFlight  *prometheus.Desc
	waiting, lagTotals *prometheus.Desc
}

func newQueueCollector(d *Dispatcher) *queueCollector {
	l := []string{"queue"}
	return &queueCollector{
		d:         d,
		pending:   prometheus.NewDesc("agentfleet_queue_pending", "Task messages not yet delivered to a worker.", l, nil),
		inFlight:  prometheus.NewDesc("agentfleet_queue_ack_pending", "Task messages delivered and not yet settled (running).", l, nil),
		waiting:   prometheus.NewDesc("agentfleet_queue_waiting_pulls", "Pull requests waiting for work (idle worker slots).", l, nil),
		lagTotals: prometheus.NewDesc("agentfleet_queue_lag", "Pending plus in-flight task messages (the autoscaling signal).", l, nil),
	}
}

func (c *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.inFlight
	ch <- c.waiting
	ch <- c.lagTotals
}

func (c *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	for _, q := range c.d.cfg.Queues {
		lag, err := c.d.queue.QueueLag(ctx, q)
		if err != nil {
			continue // no worker served the queue yet: its consumer does not exist
		}
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(lag.Pending), q)
		ch <- prometheus.MustNewConstMetric(c.inFlight, prometheus.GaugeValue, float64(lag.AckPending), q)
		ch <- prometheus.MustNewConstMetric(c.waiting, prometheus.GaugeValue, float64(lag.Waiting), q)
		ch <- prometheus.MustNewConstMetric(c.lagTotals, prometheus.GaugeValue, float64(lag.Total()), q)
	}
}
