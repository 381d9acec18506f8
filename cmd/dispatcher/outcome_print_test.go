package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
)

// TestOutcomePrinted: tail describes check and delivery events, get lists
// the runs and the delivery.
func TestOutcomePrinted(t *testing.T) {
	run := fleet.CheckRun{Name: "test", Command: "go test ./...", Phase: fleet.CheckAfter, Round: 1, ExitCode: 1, DurationMS: 12}
	data, _ := json.Marshal(run)
	if s, ok := describeOutcomeEvent(fleet.KindCheckEnd, data); !ok || s != "check test after repair 1 failed (exit 1) in 12ms: go test ./..." {
		t.Errorf("CHECK_END described as %q, %v", s, ok)
	}
	d := fleet.DeliveryResult{Branch: "agentfleet/x", Commit: "4be0c71d9a2e0000", Pushed: true, RequestURL: "https://f/pulls/3", RequestNumber: 3}
	data, _ = json.Marshal(d)
	if s, ok := describeOutcomeEvent(fleet.KindDelivery, data); !ok || s != "delivery: branch agentfleet/x at 4be0c71d9a2e pushed, pull request #3 https://f/pulls/3" {
		t.Errorf("DELIVERY described as %q, %v", s, ok)
	}
	if _, ok := describeOutcomeEvent("TOOL_CALL_END", data); ok {
		t.Error("another kind was described as an outcome")
	}
	var b bytes.Buffer
	printOutcome(&b, fleet.TaskResult{Checks: &fleet.CheckReport{Verdict: fleet.VerdictFixed, RepairRounds: 1, Runs: []fleet.CheckRun{run}}, Delivery: &d})
	for _, want := range []string{"checks\tfixed (1 repair rounds)", "test after repair 1 failed", "delivery\tbranch agentfleet/x"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("get prints %q, want %q in it", b.String(), want)
		}
	}
}
