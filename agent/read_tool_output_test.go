package agent_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

func toolNames(req llm.Request) []string {
	var names []string
	for _, d := range req.Tools {
		names = append(names, d.Name)
	}
	return names
}

// A truncated output can be read whole with read_tool_output, offered as
// soon as an output was truncated (not only after a compaction), also in a
// resumed session.
func TestReadToolOutputAfterTruncation(t *testing.T) {
	long := strings.Repeat("a", 3000) + "THE-END"
	client := newFakeClient(
		step{calls: []llm.ToolCall{call("e1", "echo", map[string]any{"text": long})}},
		step{calls: []llm.ToolCall{call("r1", "read_tool_output", map[string]any{"call_id": "e1", "offset": 2990})}},
		step{text: "read it"})
	profile := &testProfile{reg: tools.NewRegistry(echoTool(false)), window: 1 << 20}
	cfg := agent.Config{Profile: profile, Session: agent.SessionConfig{ToolOutputLimits: map[string]int{"echo": 500}}}
	b := setup(t, cfg, client)
	if _, err := b.s.Submit(ctx30(t), "echo"); err != nil {
		t.Fatal(err)
	}
	reqs := client.Requests()
	if slices.Contains(toolNames(reqs[0]), "read_tool_output") {
		t.Fatal("read_tool_output offered before any output was truncated")
	}
	if !slices.Contains(toolNames(reqs[1]), "read_tool_output") {
		t.Fatalf("read_tool_output not offered after a truncation: %v", toolNames(reqs[1]))
	}
	h := b.s.History()
	var cut, read llm.ToolResult
	for _, turn := range h {
		for _, r := range turn.Results {
			switch r.ToolCallID {
			case "e1":
				cut = r
			case "r1":
				read = r
			}
		}
	}
	if len(cut.Content) >= len(long) || !strings.Contains(cut.Content, `read_tool_output with call_id "e1"`) {
		t.Fatalf("truncated result does not point at read_tool_output: %q", cut.Content[len(cut.Content)-200:])
	}
	if read.IsError || !strings.HasPrefix(read.Content, "aaaaaaaaaaTHE-END") {
		t.Fatalf("read_tool_output = %+v", read)
	}

	resumed, err := agent.New(agent.Config{Client: newFakeClient(), Profile: profile, Env: b.s.Env(), History: h, ID: b.s.ID()})
	if err != nil {
		t.Fatal(err)
	}
	defer resumed.Abort()
	if _, ok := resumed.Registry().Get("read_tool_output"); !ok {
		t.Fatal("a resumed session does not offer read_tool_output")
	}
}
