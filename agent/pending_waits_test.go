package agent

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
)

func TestPendingWaits(t *testing.T) {
	call := func(id, name, args string) llm.ToolCall {
		return llm.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(args)}
	}
	h := []Turn{
		{Kind: TurnUser, Text: "go"},
		{Kind: TurnAssistant, ToolCalls: []llm.ToolCall{call("c0", "wait", `{"agent_id":"old"}`)}},
		{Kind: TurnToolResults, Results: []llm.ToolResult{{ToolCallID: "c0"}}},
		{Kind: TurnAssistant, ToolCalls: []llm.ToolCall{
			call("c1", "wait", `{"agent_id":"a"}`),
			call("c2", "shell", `{"command":"ls"}`),
			call("c3", "wait", `{"agent_id":"b"}`),
			call("c4", "wait", `not json`),
			call("c5", "wait", `{"agent_id":"c"}`),
		}},
		{Kind: TurnToolResults, Results: []llm.ToolResult{{ToolCallID: "c1"}}},
	}
	if got, want := PendingWaits(h), []string{"b", "c"}; !slices.Equal(got, want) {
		t.Fatalf("PendingWaits = %q, want %q (the last round's unanswered waits, bad arguments skipped)", got, want)
	}
	if got := PendingWaits(h[:1]); got != nil {
		t.Fatalf("PendingWaits without an assistant turn = %q, want none", got)
	}
}
