package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/client"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// parkForApproval stores a task parked on worker w1 waiting for the
// approval of call c1, as a worker leaves it.
func parkForApproval(t *testing.T, f dispatcherFixture) string {
	t.Helper()
	ctx := context.Background()
	spec, _ := json.Marshal(fleet.TaskSpec{Prompt: "p", Profile: "anthropic"})
	res, err := f.st.CreateTask(ctx, store.CreateTaskParams{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Task.ID
	if _, err := f.st.ClaimTask(ctx, store.ClaimTaskParams{ID: id, WorkerID: "w1"}); err != nil {
		t.Fatal(err)
	}
	turn, _ := json.Marshal(map[string]any{"index": 0, "kind": "assistant",
		"tool_calls": []map[string]any{{"id": "c1", "name": "shell", "arguments": map[string]string{"command": "git push -f"}}}})
	if _, err := f.st.AppendTurns(ctx, store.AppendTurnsParams{SessionID: id, OwnerWorkerID: "w1",
		CreateSession: &store.CreateSessionParams{ID: id, TaskID: id, Profile: "anthropic"},
		Turns:         []store.NewTurn{{Seq: 1, Kind: "assistant", Payload: turn}}}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	wf, _ := json.Marshal(fleet.WaitingFor{WaitID: "1", Approvals: []fleet.PendingApproval{{CallID: "c1", Tool: "shell",
		Rule: "destructive: force push", Summary: "git push -f", RequestedAt: now, ExpiresAt: now.Add(time.Hour)}}})
	if _, err := f.st.TransitionTask(ctx, store.TransitionTaskParams{ID: id, From: store.TaskRunning, To: store.TaskWaiting,
		WorkerID: "w1", WaitingFor: wf}); err != nil {
		t.Fatal(err)
	}
	return id.String()
}

func TestApproveDenyAndPermissionsCommands(t *testing.T) {
	f := startDispatcher(t)
	id := parkForApproval(t, f)
	if code, out := run(t, "permissions", id); code != 0 || !strings.Contains(out, "c1") || !strings.Contains(out, "destructive: force push") {
		t.Fatalf("permissions: exit %d\n%s", code, out)
	}
	if code, out := run(t, "get", id); code != 0 || !strings.Contains(out, "waits for approval") || !strings.Contains(out, "dispatcher approve|deny "+id+" c1") {
		t.Fatalf("get: exit %d\n%s", code, out)
	}
	if code, out := run(t, "deny", id, "c1", "--reason", "not on main"); code != 0 ||
		!strings.Contains(out, "denied shell call c1") {
		t.Fatalf("deny: exit %d\n%s", code, out)
	}
	if code, out := run(t, "approve", id, "c1"); code != 1 || !strings.Contains(out, "409") || !strings.Contains(out, "answered already") {
		t.Fatalf("approve of an answered call: exit %d\n%s", code, out)
	}
	if code, out := run(t, "permissions", id); code != 0 || !strings.Contains(out, "denied by bootstrap") || !strings.Contains(out, "not on main") {
		t.Fatalf("permissions after the answer: exit %d\n%s", code, out)
	}
	task, err := f.st.GetTask(context.Background(), store.GetTaskParams{ID: uuid.MustParse(id)})
	if err != nil || task.State != store.TaskQueued {
		t.Fatalf("task after the answer: %s %v", task.State, err)
	}
}

func TestTailDescribesPermissionEvents(t *testing.T) {
	var out strings.Builder
	p := &eventPrinter{w: &out}
	data, _ := json.Marshal(map[string]any{"tool_name": "shell", "call_id": "toolu_1",
		"permission": map[string]any{"kind": "request", "rule": "destructive: force push", "summary": "git push -f"}})
	p.print(client.StreamedEvent{Event: queue.Event{Kind: "APPROVAL_REQUESTED", TaskID: "01a2-task", Data: data}})
	got := out.String()
	for _, want := range []string{"waits for approval: shell (destructive: force push): git push -f", "dispatcher approve|deny 01a2-task toolu_1"} {
		if !strings.Contains(got, want) {
			t.Errorf("tail printed %q, lacking %q", got, want)
		}
	}
}
