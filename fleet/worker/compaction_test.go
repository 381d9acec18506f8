package worker_test

import (
	"fmt"

	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/agent/compact"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// compactions reads a session's compaction records from the store.
func compactions(t *testing.T, st store.Store, session uuid.UUID) []compact.Record {
	t.Helper()
	h, err := worker.LoadHistory(waitCtx(t), st, session)
	if err != nil {
		t.Fatal(err)
	}
	var out []compact.Record
	for _, turn := range h {
		if turn.Kind == agent.TurnCompaction {
			out = append(out, *turn.Compaction)
		}
	}
	return out
}

// TestTaskOutlivesItsContextWindow: in the fleet, a task whose tool
// outputs overflow its 8,192-token window compacts (recorded in the
// store) and ends with the scripted answer; the compact control operation
// compacts a running session before its next model call.
func TestTaskOutlivesItsContextWindow(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	f.Model.SetCountTokens(true)
	var steps []fleettest.Step
	for i := range 12 {
		steps = append(steps, fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(fmt.Sprintf("printf '%%0*d' 6000 %d", i))}})
	}
	steps = append(steps, fleettest.Step{Gate: "asked", Calls: []fleettest.Call{fleettest.Shell("true")}}, fleettest.Step{Text: "all rounds done"})
	spec := fleettest.Spec("long", steps...)
	spec.Context = fleet.ContextSpec{Window: 8192}
	id := f.Submit(spec)
	select {
	case <-f.Model.Arrived("asked"):
	case <-waitCtx(t).Done():
		t.Fatal("the task never reached its last rounds")
	}
	if _, err := f.Queue.Control(waitCtx(t), fleet.DefaultTenant, id.String(), queue.ControlRequest{Op: queue.OpCompact}); err != nil {
		t.Fatal(err)
	}
	f.Model.Open("asked")
	res := succeeded(t, f.WaitDone(id))
	if res.FinalText != "all rounds done" {
		t.Fatalf("final text %q", res.FinalText)
	}
	recs := compactions(t, f.Store, id)
	reasons := map[string]int{}
	for _, r := range recs {
		reasons[r.Reason]++
	}
	if reasons[compact.ReasonThreshold] == 0 || reasons[compact.ReasonRequested] != 1 {
		t.Fatalf("compactions by reason %v; want threshold ones and one requested", reasons)
	}
	if !strings.Contains(recs[len(recs)-1].Summary, "#agentfleet-prompt") {
		t.Fatalf("the requested compaction wrote no summary: %+v", recs[len(recs)-1])
	}
}

// TestCutAnswerIsContinuedInTheFleet: an answer cut by the output-token
// limit gets a continuation request, and the task's final text joins the
// pieces.
func TestCutAnswerIsContinuedInTheFleet(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	id := f.Submit(fleettest.Spec("long answer",
		fleettest.Step{Text: "The first half, ", Finish: "max_tokens"},
		fleettest.Step{Text: "and the end."}))
	if res := succeeded(t, f.WaitDone(id)); res.FinalText != "The first half, and the end." {
		t.Fatalf("final text %q", res.FinalText)
	}
}
