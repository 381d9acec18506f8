package ratelimit

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfleet/agentfleet/llm"
)

// Lazy holds a limiter that is opened after the clients using it were
// built (a worker reaches NATS after it configured its providers). Until
// Set, its transport sends requests unlimited. Safe for concurrent use.
type Lazy struct {
	lim atomic.Pointer[Limiter]
}

// Set installs the limiter.
func (z *Lazy) Set(l *Limiter) { z.lim.Store(l) }

// Get returns the limiter, nil before Set.
func (z *Lazy) Get() *Limiter { return z.lim.Load() }

// HTTPClient is a client whose requests go through the limiter once it is
// set, over llm.DefaultTransport().
func (z *Lazy) HTTPClient() *http.Client {
	return &http.Client{Transport: lazyTransport{z: z, base: llm.DefaultTransport()}}
}

type lazyTransport struct {
	z    *Lazy
	base http.RoundTripper
}

func (t lazyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if lim := t.z.Get(); lim != nil {
		return lim.Transport(t.base).RoundTrip(req)
	}
	return t.base.RoundTrip(req)
}

// Metrics count the waits: agentfleet_<subsystem>_llm_rate_limit_waits_total
// (provider, model, reason) and _llm_rate_limit_wait_seconds.
type Metrics struct {
	waits   *prometheus.CounterVec
	waiting *prometheus.HistogramVec
}

// NewMetrics registers the wait metrics with reg.
func NewMetrics(reg prometheus.Registerer, subsystem string, constLabels prometheus.Labels) (*Metrics, error) {
	m := &Metrics{
		waits: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "agentfleet", Subsystem: subsystem,
			Name: "llm_rate_limit_waits_total", ConstLabels: constLabels,
			Help: "Model requests that waited for a fleet-wide rate limit, by provider, model and the limit that held them."},
			[]string{"provider", "model", "reason"}),
		waiting: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "agentfleet", Subsystem: subsystem,
			Name: "llm_rate_limit_wait_seconds", ConstLabels: constLabels, Buckets: prometheus.ExponentialBuckets(0.01, 3, 10),
			Help: "How long model requests waited for a fleet-wide rate limit."}, []string{"provider", "model"}),
	}
	for _, c := range []prometheus.Collector{m.waits, m.waiting} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Waited counts one wait of a request for k.
func (m *Metrics) Waited(k Key, waited time.Duration, reason string) {
	m.waits.WithLabelValues(k.Provider, k.Model, reason).Inc()
	m.waiting.WithLabelValues(k.Provider, k.Model).Observe(waited.Seconds())
}
