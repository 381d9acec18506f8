package worker_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// TestDeadLetteredChildWakesItsParent: a child whose message is
// dead-lettered ends through the completer like any other end, so the
// parent waiting for it wakes and finishes. (The dead-letter watcher used
// to mark the child failed and stop there: the parent waited for ever.)
// Each end is counted once: the child's by the watcher, the parent's by
// its run.
func TestDeadLetteredChildWakesItsParent(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Queue: queue.Config{MaxDeliver: 2}})
	poison := []fleettest.Step{{Fail: &sim.Failure{Kind: llm.ErrOverloaded}, FailTimes: 1000}}
	id := f.Submit(sharedSpec(t, "parent of a poison child", fanOut([][]fleettest.Step{poison})...))
	succeeded(t, f.WaitDone(id))
	kids := children(t, f, id)
	if len(kids) != 1 || kids[0].State != store.TaskFailed || kids[0].Error != fleet.ReasonDeadLetter {
		t.Fatalf("children %+v; want one, failed as %s", kids, fleet.ReasonDeadLetter)
	}
	g := f.Workers()[0].Gatherer()
	testenv.Eventually(t, fleettest.Wait, "both ends counted", func() bool {
		n := finishedByState(t, g)
		return n[store.TaskFailed] == 1 && n[store.TaskSucceeded] == 1
	})
	if n := finishedByState(t, g); len(n) != 2 {
		t.Fatalf("tasks_finished_total %v; want one failed and one succeeded end", n)
	}
}

// finishedByState reads agentfleet_worker_tasks_finished_total by state.
func finishedByState(t *testing.T, g prometheus.Gatherer) map[store.TaskState]float64 {
	t.Helper()
	families, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[store.TaskState]float64{}
	for _, mf := range families {
		if mf.GetName() != "agentfleet_worker_tasks_finished_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "state" {
					out[store.TaskState(l.GetValue())] += m.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// TestStalledTaskStopsWithNoProgress: a session that repeats the same call
// for round after round is stopped by the watchdog within the spec's
// window, and the task fails with the reason no_progress instead of
// running to its turn limit.
func TestStalledTaskStopsWithNoProgress(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	var steps []fleettest.Step
	for range 20 {
		steps = append(steps, fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("echo same")}})
	}
	spec := fleettest.Spec("stalled", append(steps, fleettest.Step{Text: "never reached"})...)
	spec.Session.NoProgressRounds = 2
	task := f.WaitDone(f.Submit(spec))
	if task.State != store.TaskFailed || task.Error != fleet.ReasonNoProgress {
		t.Fatalf("stalled task %s %q; want failed with %s", task.State, task.Error, fleet.ReasonNoProgress)
	}
	if n := fleettest.Result(t, task).TurnsUsed; n > 6 {
		t.Fatalf("the stalled task spent %d turns; want it stopped within the watchdog's window (2 rounds, then 1)", n)
	}
}
