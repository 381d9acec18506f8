package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// TestReadOnlySubagentCannotWrite: an in-process child spawned with
// read_only has its parent's permissions narrowed to plan: its mutating
// tool never runs, while the same call of the parent does.
func TestReadOnlySubagentCannotWrite(t *testing.T) {
	var ran atomic.Int32
	write := tools.Tool{Name: "write_note", Description: "writes a note", Mutates: true,
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`),
		Run: func(context.Context, tools.Call) (tools.Output, error) {
			ran.Add(1)
			return tools.Output{Text: "written"}, nil
		}}
	var childOut string
	parent := []step{
		{calls: []llm.ToolCall{call("s", "spawn_agent", map[string]any{"task": "CHILD: review", "read_only": true})}},
		{fn: func(req llm.Request) (*llm.Response, error) {
			var st agent.SubagentStatus
			msgs := req.Messages
			_ = json.Unmarshal([]byte(msgs[len(msgs)-1].Content[0].ToolResult.Content), &st)
			return response("", llm.Usage{}, call("w", "wait", map[string]string{"agent_id": st.AgentID})), nil
		}},
		{fn: func(req llm.Request) (*llm.Response, error) {
			msgs := req.Messages
			childOut = msgs[len(msgs)-1].Content[0].ToolResult.Content
			return response("", llm.Usage{}, call("p", "write_note", map[string]string{})), nil
		}},
		{text: "done"},
	}
	child := []step{
		{calls: []llm.ToolCall{call("c", "write_note", map[string]string{})}},
		{fn: func(req llm.Request) (*llm.Response, error) {
			msgs := req.Messages
			return response("child got: "+msgs[len(msgs)-1].Content[0].ToolResult.Content, llm.Usage{}), nil
		}},
	}
	b := setup(t, agent.Config{}, routeClient(parent, child), write)
	if _, err := b.s.Submit(ctx30(t), "delegate"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(childOut, "plan mode") {
		t.Errorf("the child's write was not refused by plan mode: %s", childOut)
	}
	if n := ran.Load(); n != 1 {
		t.Errorf("write_note ran %d times, want once (the parent's call only)", n)
	}
}
