package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// TestSmoke is the end-to-end scenario with a scripted model:
// one session per provider (in parallel, so the three real 10-second
// timeouts overlap) and real tools in a temp workspace. Step 7 takes 10 s.
func TestSmoke(t *testing.T) {
	forEachProvider(t, func(t *testing.T, p provider) {
		var cfg agent.Config
		if p.name == "anthropic" {
			// The anthropic profile's own default is Claude Code's 120 s; the
			// smoke test asks for the 10 s the other profiles default to.
			cfg.Session.DefaultCommandTimeout = 10 * time.Second
		}
		w := newWorld(t, p, cfg)

		t.Run("1_simple_file_creation", func(t *testing.T) {
			w.script(calls(w.write("hello.py", "print('Hello World')\n")), sim.Text("Created hello.py."))
			w.submit("Create a file called hello.py that prints 'Hello World'")
			contains(t, "hello.py", w.file("hello.py"), "Hello")
		})
		t.Run("2_read_and_edit", func(t *testing.T) {
			w.script(calls(w.read("hello.py")),
				calls(w.edit("hello.py", "print('Hello World')", "print('Hello World')", "print('Goodbye')")),
				sim.Text("Added Goodbye."))
			w.submit("Read hello.py and add a second print statement that says 'Goodbye'")
			got := w.file("hello.py")
			contains(t, "hello.py", got, "Hello")
			contains(t, "hello.py", got, "Goodbye")
		})
		t.Run("3_shell_execution", func(t *testing.T) {
			run := w.shell("if command -v python3 >/dev/null; then python3 hello.py; else cat hello.py; fi")
			w.script(calls(run), sim.Text("It prints Hello World and Goodbye."))
			w.submit("Run hello.py and show the output")
			if ev := w.waitFor("shell TOOL_CALL_START", func(ev agent.Event) bool {
				return ev.Kind == agent.EventToolCallStart && ev.ToolName == "shell"
			}); ev.CallID != run.ID {
				t.Fatalf("shell call %+v", ev)
			}
			contains(t, "shell output", w.toolEnd(run.ID).Output, "Goodbye")
		})
		t.Run("4_truncation", func(t *testing.T) {
			must(t, w.env.WriteFile(context.Background(), "big.txt", []byte(strings.Repeat("x", 100000))))
			read := w.read("big.txt")
			w.script(calls(read), sim.Text("A very long line of x."))
			w.submit("Read big.txt")
			if n := strings.Count(w.toolEnd(read.ID).Output, "x"); n != 100000 {
				t.Fatalf("TOOL_CALL_END has %d x's, want 100000", n)
			}
			contains(t, "ToolResult sent to the LLM", w.body(-1), "[WARNING: Tool output was truncated.")
		})
		t.Run("5_steering", func(t *testing.T) {
			hold := w.shell("while [ ! -f go.flag ]; do sleep 0.05; done; ls")
			app := "from flask import Flask\napp = Flask(__name__)\n\n@app.route('/health')\ndef health():\n    return 'ok'\n"
			w.script(calls(hold), calls(w.write("app.py", app)), sim.Text("Created app.py with only /health."))
			n := len(w.srv.Requests())
			done := make(chan error, 1)
			go func() {
				_, err := w.s.Submit(context.Background(), "Create a Flask web application with multiple routes")
				done <- err
			}()
			w.waitFor("TOOL_CALL_START", func(ev agent.Event) bool { return ev.Kind == agent.EventToolCallStart && ev.CallID == hold.ID })
			must(t, w.s.Steer("Actually, just create a single /health endpoint for now"))
			w.writeFile("go.flag", "")
			must(t, <-done)
			contains(t, "the request after steering", w.body(n+1), "just create a single /health endpoint")
			if strings.Contains(w.body(n), "/health endpoint") {
				t.Fatal("steering reached the model before the tool round ended")
			}
			contains(t, "app.py", w.file("app.py"), "/health")
		})
		t.Run("6_subagent", func(t *testing.T) {
			spawn, wait := w.spawn("Write tests for hello.py in test_hello.py"), w.wait("agent-1")
			w.script(calls(spawn, wait),
				calls(w.write("test_hello.py", "def test_hello():\n    assert True\n")), sim.Text("Wrote test_hello.py."),
				sim.Text("The subagent wrote test_hello.py; it looks fine."))
			w.submit("Spawn a subagent to write tests for hello.py, then review its output")
			for _, id := range []string{spawn.ID, wait.ID} {
				w.waitFor("subagent tool call "+id, func(ev agent.Event) bool { return ev.Kind == agent.EventToolCallStart && ev.CallID == id })
			}
			var res agent.SubagentResult
			must(t, json.Unmarshal([]byte(w.toolEnd(wait.ID).Output), &res))
			if !res.Success || res.Output != "Wrote test_hello.py." {
				t.Fatalf("wait result %+v", res)
			}
			contains(t, "test_hello.py", w.file("test_hello.py"), "def test_hello")
		})
		t.Run("7_timeout_default_10s", func(t *testing.T) {
			sleep := w.shell("sleep 30")
			w.script(calls(sleep), sim.Text("sleep 30 timed out after 10 seconds, as expected."))
			out := w.submit("Run 'sleep 30' with the default timeout")
			end := w.toolEnd(sleep.ID)
			if !end.IsError {
				t.Fatalf("not an error result: %s", end.Output)
			}
			contains(t, "timeout result", end.Output, "timed out after 10000ms")
			if out.Stop != agent.StopCompleted || w.s.State() != agent.StateIdle {
				t.Fatalf("the agent did not handle the timeout gracefully: %+v", out)
			}
		})
	})
}
