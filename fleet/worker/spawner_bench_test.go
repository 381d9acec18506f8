package worker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// BenchmarkSubagentLatency measures, over a parent that spawns and waits
// for 20 children one after the other (no model latency), the time from
// spawn_agent to the child's start and from the child's end to the parent's
// resume. Run: go test ./fleet -run '^$' -bench SubagentLatency -benchtime 1x.
func BenchmarkSubagentLatency(b *testing.B) {
	f := fleettest.Start(b, fleettest.Options{Workers: 2, Slots: 2})
	var spawnToStart, endToResume []time.Duration
	for i := range b.N {
		var steps []fleettest.Step
		for j := range 20 {
			steps = append(steps,
				fleettest.Step{Calls: []fleettest.Call{fleettest.Spawn(fmt.Sprintf("kid %d/%d", i, j), fleettest.Step{Text: "ok"})}},
				fleettest.Step{Calls: []fleettest.Call{{Name: "wait", Args: map[string]any{"agent_id": fmt.Sprintf("{{agent:%d}}", j)}}}})
		}
		steps = append(steps, fleettest.Step{Text: "all done"})
		spec := fleettest.Spec(fmt.Sprintf("sequential %d", i), steps...)
		spec.Environment = fleet.Environment{Kind: fleet.EnvLocal, WorkingDir: fleettest.SharedDir(b), Shared: true}
		id := f.Submit(spec)
		if task := f.WaitDone(id); task.State != store.TaskSucceeded {
			b.Fatalf("state %s: %s", task.State, task.Error)
		}
		s, r := treeLatencies(b, f, id)
		spawnToStart, endToResume = append(spawnToStart, s...), append(endToResume, r...)
	}
	report(b, "spawn_to_start", spawnToStart)
	report(b, "end_to_resume", endToResume)
}

// BenchmarkTree100 runs one root with 100 children on 2 workers with 4
// slots each, with a simulated model latency, and reports the total time
// against the ideal for the slots: the root's first call, 100 child calls
// spread over 8 slots (13 waves), then the root's wait round and answer.
func BenchmarkTree100(b *testing.B) {
	const children, slots, latency = 100, 4, 50 * time.Millisecond
	f := fleettest.Start(b, fleettest.Options{Workers: 2, Slots: slots})
	f.Model.SetLatency(latency)
	var kids [][]fleettest.Step
	for i := range children {
		kids = append(kids, []fleettest.Step{{Text: fmt.Sprintf("child %d", i)}})
	}
	steps := fanOut(kids)
	ideal := latency * time.Duration(3+(children+2*slots-1)/(2*slots))
	var total time.Duration
	for i := range b.N {
		spec := fleettest.Spec(fmt.Sprintf("tree %d", i), steps...)
		spec.Environment = fleet.Environment{Kind: fleet.EnvLocal, WorkingDir: fleettest.SharedDir(b), Shared: true}
		spec.MaxLiveChildren = children
		start := time.Now()
		id := f.Submit(spec)
		if task := f.WaitDone(id); task.State != store.TaskSucceeded {
			b.Fatalf("state %s: %s", task.State, task.Error)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/tree")
	b.ReportMetric(float64(ideal.Milliseconds()), "ideal_ms")
}

// treeLatencies reads a finished tree: spawn (child created) to child
// start, and child end to the parent's next event after it parked.
func treeLatencies(b *testing.B, f *fleettest.Fleet, root uuid.UUID) (spawn, resume []time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), fleettest.Wait)
	defer cancel()
	kids, err := f.Store.Children(ctx, store.ChildrenParams{ParentID: root})
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range kids.Children {
		spawn = append(spawn, k.StartedAt.Sub(k.CreatedAt))
	}
	sub, err := f.Queue.SubscribeEvents(ctx, queue.EventFilter{TaskID: root.String()}, queue.FromStart())
	if err != nil {
		b.Fatal(err)
	}
	defer sub.Stop()
	finished := map[string]time.Time{}
	for _, k := range kids.Children {
		finished[k.ID.String()] = k.FinishedAt
	}
	parked := false
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if ev.Kind == fleet.KindSessionEnd {
			break
		}
		if ev.Kind == string(agent.EventParked) {
			parked = true
			continue
		}
		if !parked || ev.Kind != string(agent.EventToolCallStart) {
			continue
		}
		parked = false
		// The resumed session first re-runs the wait that parked it.
		var d agent.Event
		var args struct {
			AgentID string `json:"agent_id"`
		}
		if json.Unmarshal(ev.Data, &d) == nil && json.Unmarshal(d.Arguments, &args) == nil {
			if end, ok := finished[args.AgentID]; ok {
				resume = append(resume, ev.Time.Sub(end))
			}
		}
	}
	return spawn, resume
}

func report(b *testing.B, name string, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	slices.Sort(ds)
	q := func(p float64) float64 { return float64(ds[int(p*float64(len(ds)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), name+"_p50_ms")
	b.ReportMetric(q(0.99), name+"_p99_ms")
}
