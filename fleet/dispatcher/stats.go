package dispatcher

import (
	"context"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/fleet/api"

	"github.com/agentfleet/agentfleet/store"
)

// throughput keeps samples of the task counts by state over a window, to
// report how fast tasks finish. Run writes it; API handlers read it.
type throughput struct {
	window time.Duration

	mu      sync.Mutex
	samples []countSample // oldest first, within window of the newest
}

type countSample struct {
	at       time.Time
	finished int64 // succeeded + failed + cancelled
	counts   map[store.TaskState]int64
}

func newThroughput(window time.Duration) *throughput { return &throughput{window: window} }

func (t *throughput) add(at time.Time, counts map[store.TaskState]int64) {
	s := countSample{at: at, counts: counts}
	for st, n := range counts {
		if st.Terminal() {
			s.finished += n
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.samples = append(t.samples, s)
	cut := 0
	for cut < len(t.samples)-1 && at.Sub(t.samples[cut].at) > t.window {
		cut++
	}
	t.samples = t.samples[cut:]
}

// rate returns the finished tasks per second between the oldest and the
// newest sample, and the span it covers (0 with fewer than two samples).
func (t *throughput) rate() (perSecond float64, span time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.samples) < 2 {
		return 0, 0
	}
	first, last := t.samples[0], t.samples[len(t.samples)-1]
	span = last.at.Sub(first.at)
	if span <= 0 {
		return 0, 0
	}
	return float64(last.finished-first.finished) / span.Seconds(), span
}

// Stats reads the counts, the queue backlogs and the throughput.
func (d *Dispatcher) Stats(ctx context.Context) (api.Stats, error) {
	counts, err := d.store.CountTasks(ctx, store.CountTasksParams{})
	if err != nil {
		return api.Stats{}, err
	}
	st := api.Stats{Counts: counts, Queues: make([]api.QueueStats, 0, len(d.cfg.Queues))}
	for _, q := range d.cfg.Queues {
		qs := api.QueueStats{Queue: q}
		lag, err := d.queue.QueueLag(ctx, q)
		if err != nil {
			qs.Error = err.Error()
		} else {
			qs.Pending, qs.AckPending, qs.Waiting, qs.Lag = lag.Pending, lag.AckPending, lag.Waiting, lag.Total()
		}
		st.Queues = append(st.Queues, qs)
	}
	rate, span := d.stats.rate()
	st.FinishedPerSecond, st.WindowSeconds = rate, span.Seconds()
	qm := d.queue.Metrics()
	st.Enqueued, st.EnqueueDuplicates = qm.Enqueued.Load(), qm.EnqueueDuplicates.Load()
	return st, nil
}
