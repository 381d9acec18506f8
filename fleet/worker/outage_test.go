package worker_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/store/pgtest"
	"github.com/agentfleet/agentfleet/store/postgres"
)

// outageFleet is a fleet on a private Postgres cluster the test stops and
// starts, with a delivery budget (3 deliveries, 50-100 ms apart) that a
// store outage of a second or two would exhaust if failed claims spent it.
type outageFleet struct {
	*fleettest.Fleet
	pg *pgtest.Cluster
}

func startOutageFleet(t *testing.T, workers int) *outageFleet {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), fleettest.Wait)
	defer cancel()
	c, _ := pgtest.NewClusterWithDatabase(t)
	st, err := postgres.Open(ctx, postgres.Config{DSN: c.DSN("app")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	f := fleettest.Start(t, fleettest.Options{Store: st, DSN: c.DSN("app"), Workers: workers, NoWorkers: workers == 0,
		Queue: queue.Config{MaxDeliver: 3},
		Worker: func(_ int, c *worker.Config) {
			c.RetryBackoff, c.MaxRetryBackoff = 50*time.Millisecond, 100*time.Millisecond
		}})
	return &outageFleet{Fleet: f, pg: c}
}

// outage stops Postgres for d, then starts it again. d is the length of
// the outage under test, not a wait for something to happen.
func (f *outageFleet) outage(t *testing.T, d time.Duration, during func()) {
	t.Helper()
	f.pg.Stop()
	during()
	time.Sleep(d)
	ctx, cancel := context.WithTimeout(context.Background(), fleettest.Wait)
	defer cancel()
	if err := f.pg.Start(ctx); err != nil {
		t.Fatal(err)
	}
}

// A worker whose store is away stops pulling and holds the claims it has
// (their messages kept in progress) until the store answers: the outage
// spends no delivery, so a backlog queued through it is not dead-lettered.
func TestStoreOutageSpendsNoDelivery(t *testing.T) {
	f := startOutageFleet(t, 0)
	var ids []uuid.UUID
	for range 4 {
		ids = append(ids, f.Submit(fleettest.Spec("queued through an outage", fleettest.Step{Text: "done"})))
	}
	f.outage(t, 2*time.Second, func() {
		w := f.StartWorker()
		testenv.Eventually(t, fleettest.Wait, "the worker to notice the store is away",
			func() bool { return metricValue(t, w.Gatherer(), "agentfleet_worker_store_up") == 0 })
		if w.Ready() {
			t.Error("the worker is ready while its store is away")
		}
	})
	for _, id := range ids {
		task := f.WaitDone(id)
		if task.State != store.TaskSucceeded || task.Attempts != 1 {
			t.Errorf("task %s: %s (%s) after %d claims; want succeeded at the first claim", id, task.State, task.Error, task.Attempts)
		}
	}
	if !f.Workers()[0].Ready() {
		t.Error("the worker is not ready again after the store came back")
	}
}

// A store outage in the middle of a session is waited out: the turn write
// and the final transition wait for the store, and the task succeeds in its
// first run instead of failing as a model error or going back to the queue.
func TestStoreOutageMidSessionIsWaitedOut(t *testing.T) {
	f := startOutageFleet(t, 1)
	id := f.Submit(fleettest.Spec("outage mid-session",
		fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("true")}},
		fleettest.Step{Gate: "g", Calls: []fleettest.Call{fleettest.Shell("true")}},
		fleettest.Step{Text: "done"}))
	select {
	case <-f.Model.Arrived("g"):
	case <-time.After(fleettest.Wait):
		t.Fatal("the session's second model call never came")
	}
	f.outage(t, 2*time.Second, func() { f.Model.Open("g") })
	task := f.WaitDone(id)
	res := fleettest.Result(t, task)
	if task.State != store.TaskSucceeded || task.Attempts != 1 || res.FinalText != "done" {
		t.Fatalf("task: %s (%s) after %d claims, result %+v; want succeeded in its first run",
			task.State, task.Error, task.Attempts, res)
	}
	if task.Error == fleet.ReasonModelError {
		t.Fatal("a store outage was recorded as a model error")
	}
}

// metricValue reads a gauge or counter without labels beyond the worker's,
// -1 when absent.
func metricValue(t *testing.T, g prometheus.Gatherer, name string) float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range families {
		if mf.GetName() != name || len(mf.GetMetric()) == 0 {
			continue
		}
		m := mf.GetMetric()[0]
		if m.GetGauge() != nil {
			return m.GetGauge().GetValue()
		}
		return m.GetCounter().GetValue()
	}
	return -1
}
