package agent_test

import (
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// TestBadInput: a model that calls an unknown tool, passes arguments that
// fail the schema, sends invalid JSON, or repeats the same call gets the
// documented error result (or LOOP_DETECTION) and the session goes on.
func TestBadInput(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		t.Run("unknown_tool", func(t *testing.T) { itemUnknownTool(t, newWorld(t, p, agent.Config{})) })
		t.Run("schema_failure", func(t *testing.T) {
			w := newWorld(t, p, agent.Config{})
			c := w.tc("write_file", map[string]any{"file_path": "x.txt", "content": 42})
			fixed := w.write("x.txt", "42\n")
			w.script(calls(c), calls(fixed), sim.Text("Fixed the arguments."))
			out := w.submit("write 42 to x.txt")
			r := w.result(c.ID)
			if !r.IsError || !strings.Contains(r.Content, "invalid arguments") || !strings.Contains(r.Content, "content") {
				t.Fatalf("result %+v", r)
			}
			if out.Stop != agent.StopCompleted || w.file("x.txt") != "42\n" {
				t.Fatalf("the session did not go on: %+v", out)
			}
		})
		t.Run("invalid_json_arguments", func(t *testing.T) {
			w := newWorld(t, p, agent.Config{})
			c := sim.ToolCallReply{ID: w.id(), Name: "shell", Arguments: `{"command": "echo hi"`}
			w.script(calls(c), sim.Text("I will send valid JSON next time."))
			out := w.submit("say hi")
			r := w.result(c.ID)
			if !r.IsError || !strings.Contains(r.Content, "JSON") {
				t.Fatalf("result %+v", r)
			}
			if out.Stop != agent.StopCompleted {
				t.Fatalf("outcome %+v", out)
			}
		})
		t.Run("same_call_over_and_over", func(t *testing.T) { parityLoopDetection(t, newWorld(t, p, agent.Config{})) })
	})
}
