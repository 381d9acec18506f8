package approval_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/approval"
)

// TestAnswerTurnIsTheAgentsTurn checks that the turn Decide writes
// without linking the agent decodes as the agent's own permission turn.
func TestAnswerTurnIsTheAgentsTurn(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	pa := fleet.PendingApproval{CallID: "c1", Tool: "shell", Rule: "destructive: force push", Summary: "git push -f"}
	a := permission.Answer{Approved: false, Reason: "no", Remember: true, By: "ana"}
	raw, err := approval.AnswerTurn(7, pa, a, now)
	if err != nil {
		t.Fatal(err)
	}
	var got agent.Turn
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	want := agent.AnswerTurn(7, "c1", "shell", "destructive: force push", a)
	want.Time, want.Permission.Reason, want.Permission.Summary, want.Permission.Time = now, "no", "git push -f", now
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %+v\nwant    %+v", got, want)
	}
}
