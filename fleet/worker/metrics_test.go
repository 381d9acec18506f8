package worker_test

import (
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// The worker counts every nak it sends and every dead letter its watcher
// handles, on its own /metrics.
func TestNaksAndDeadLettersAreCounted(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Queue: queue.Config{MaxDeliver: 2}})
	spec := fleettest.Spec("always limited", fleettest.Step{Fail: &sim.Failure{Kind: llm.ErrRateLimited, RetryAfter: "0"}, FailTimes: 1000})
	id := f.Submit(spec)
	task := f.WaitDone(id)
	if task.State != store.TaskFailed || task.Error != fleet.ReasonDeadLetter {
		t.Fatalf("task %s (%s), want failed as %s", task.State, task.Error, fleet.ReasonDeadLetter)
	}
	g := f.Workers()[0].Gatherer()
	testenv.Eventually(t, fleettest.Wait, "the dead letter counted", func() bool {
		return metricValue(t, g, "agentfleet_worker_dead_letters_total") == 1
	})
	if n := metricValue(t, g, "agentfleet_worker_naks_total"); n != 2 {
		t.Fatalf("naks_total = %v, want 2 (one per delivery)", n)
	}
}
