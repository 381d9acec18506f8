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

// parityCases are the cross-provider cases: the same task for every
// provider, each through its own profile's tools.
var parityCases = []matrixCase{
	{name: "simple_file_creation", run: paritySimpleFileCreation},
	{name: "read_then_edit", run: parityReadThenEdit},
	{name: "multi_file_edit", run: parityMultiFileEdit},
	{name: "shell_execution", run: parityShellExecution},
	{name: "shell_timeout", cfg: agent.Config{Session: agent.SessionConfig{DefaultCommandTimeout: time.Second}}, run: parityShellTimeout},
	{name: "grep_and_glob", run: parityGrepAndGlob},
	{name: "multi_step_read_analyze_edit", run: parityMultiStep},
	{name: "truncation_large_file", run: parityTruncation},
	{name: "parallel_tool_calls", run: parityParallel},
	{name: "steering_mid_task", run: paritySteering},
	{name: "reasoning_effort_change", cfg: agent.Config{Session: agent.SessionConfig{ReasoningEffort: "low"}}, run: parityReasoningEffort},
	{name: "subagent_spawn_and_wait", run: paritySubagent},
	{name: "loop_detection", run: parityLoopDetection},
	{name: "error_recovery", run: parityErrorRecovery},
	{name: "provider_editing_format", run: parityEditingFormat},
}

// TestParity is the cross-provider matrix: 15 cases for each of openai, anthropic and
// gemini, each through the simulated provider in that provider's wire format, the real
// adapter, the provider's real profile and real tools in a temp workspace.
func TestParity(t *testing.T) { runMatrix(t, parityCases) }

func paritySimpleFileCreation(t *testing.T, w *world) {
	create := w.write("hello.py", "print('Hello World')\n")
	w.script(calls(create), sim.Text("Created hello.py."))
	out := w.submit("Create a file called hello.py that prints 'Hello World'")
	if out.Stop != agent.StopCompleted || out.Text != "Created hello.py." {
		t.Fatalf("outcome %+v", out)
	}
	if got := w.file("hello.py"); got != "print('Hello World')\n" {
		t.Fatalf("hello.py = %q", got)
	}
	if end := w.toolEnd(create.ID); end.IsError {
		t.Fatalf("write_file failed: %s", end.Output)
	}
}

func parityReadThenEdit(t *testing.T, w *world) {
	w.writeFile("hello.py", "print('Hello World')\n")
	read := w.read("hello.py")
	w.script(calls(read), calls(w.edit("hello.py", "print('Hello World')", "print('Hello World')", "print('Goodbye')")), sim.Text("Added Goodbye."))
	w.submit("Read hello.py and add a second print statement that says 'Goodbye'")
	contains(t, "the read result sent to the model", w.body(1), "Hello World")
	got := w.file("hello.py")
	if !strings.Contains(got, "Hello") || !strings.Contains(got, "Goodbye") {
		t.Fatalf("hello.py = %q", got)
	}
}

func parityMultiFileEdit(t *testing.T, w *world) {
	w.writeFile("a.txt", "alpha\n")
	w.writeFile("pkg/b.txt", "beta\n")
	w.script(calls(w.edit("a.txt", "alpha", "ALPHA")), calls(w.edit("pkg/b.txt", "beta", "BETA")), sim.Text("Both edited."))
	w.submit("Uppercase the words in a.txt and pkg/b.txt")
	if w.file("a.txt") != "ALPHA\n" || w.file("pkg/b.txt") != "BETA\n" {
		t.Fatalf("a.txt %q, pkg/b.txt %q", w.file("a.txt"), w.file("pkg/b.txt"))
	}
}

func parityShellExecution(t *testing.T, w *world) {
	w.writeFile("hello.sh", "echo hello from the script\nexit 3\n")
	run := w.shell("sh hello.sh")
	w.script(calls(run), sim.Text("It printed a greeting and exited with 3."))
	w.submit("Run hello.sh and show the output")
	end := w.toolEnd(run.ID)
	contains(t, "shell output", end.Output, "hello from the script")
	contains(t, "shell output", end.Output, "3")
	contains(t, "the result sent to the model", w.body(1), "hello from the script")
}

func parityShellTimeout(t *testing.T, w *world) {
	slow := w.shell("sleep 30")
	replies := []sim.Reply{calls(slow)}
	var longer sim.ToolCallReply
	if w.p.name != "gemini" { // gemini-cli's shell has no per-call timeout
		longer = w.shellWithTimeout("sleep 1.5 && echo finished-in-time", 10000)
		replies = append(replies, calls(longer))
	}
	w.script(append(replies, sim.Text("The first command timed out."))...)
	out := w.submit("Run 'sleep 30' with the default timeout")
	end := w.toolEnd(slow.ID)
	if !end.IsError {
		t.Fatal("timed-out command is not an error result")
	}
	contains(t, "timeout result", end.Output, "timed out after 1000ms")
	if out.Stop != agent.StopCompleted {
		t.Fatalf("session did not go on after the timeout: %+v", out)
	}
	if longer.ID != "" {
		contains(t, "per-call timeout override", w.toolEnd(longer.ID).Output, "finished-in-time")
	}
}

func parityGrepAndGlob(t *testing.T, w *world) {
	w.writeFile("src/alpha.go", "package src\n\nfunc Alpha() {}\n")
	w.writeFile("src/beta.go", "package src\n\nfunc Beta() {}\n")
	w.writeFile("notes.md", "func Beta is documented here\n")
	g, r := w.glob("**/*.go"), w.grep("func Beta\\(")
	w.script(calls(g, r), sim.Text("Beta is in src/beta.go."))
	w.submit("Find the Go files and where Beta is defined")
	globOut := w.toolEnd(g.ID).Output
	contains(t, "glob output", globOut, "src/alpha.go")
	contains(t, "glob output", globOut, "src/beta.go")
	if strings.Contains(globOut, "notes.md") {
		t.Fatalf("glob matched notes.md: %s", globOut)
	}
	contains(t, "grep output", w.toolEnd(r.ID).Output, "beta.go")
}

func parityMultiStep(t *testing.T, w *world) {
	w.writeFile("calc.go", "package calc\n\n// Add returns the sum of a and b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n")
	w.script(calls(w.grep("func Add")), calls(w.read("calc.go")), calls(w.edit("calc.go", "\treturn a - b", "\treturn a + b")),
		sim.Text("Add subtracted; it now adds."))
	out := w.submit("Add is wrong; find it, read it, fix it")
	contains(t, "calc.go", w.file("calc.go"), "return a + b")
	if out.Rounds != 3 || out.Turns != 4 {
		t.Fatalf("rounds %d turns %d, want 3 and 4", out.Rounds, out.Turns)
	}
}

func parityTruncation(t *testing.T, w *world) {
	w.writeFile("big.txt", strings.Repeat("x", 100000))
	read := w.read("big.txt")
	w.script(calls(read), sim.Text("It is a lot of x."))
	w.submit("Read big.txt")
	end := w.toolEnd(read.ID)
	if strings.Count(end.Output, "x") < 100000 {
		t.Fatalf("TOOL_CALL_END carries %d x's, want all 100000", strings.Count(end.Output, "x"))
	}
	res := w.result(read.ID)
	contains(t, "model-facing result", res.Content, "[WARNING: Tool output was truncated.")
	if len(res.Content) > 60000 {
		t.Fatalf("model-facing result is %d chars", len(res.Content))
	}
	contains(t, "the request after the read", w.body(1), "[WARNING: Tool output was truncated.")
}

func parityParallel(t *testing.T, w *world) {
	w.writeFile("a.txt", "content of a\n")
	w.writeFile("b.txt", "content of b\n")
	ra, rb := w.read("a.txt"), w.read("b.txt")
	w.script(calls(ra, rb), sim.Text("Read both."))
	w.submit("Read a.txt and b.txt")
	body := w.body(1)
	ia, ib := strings.Index(body, "content of a"), strings.Index(body, "content of b")
	if ia < 0 || ib < 0 || ia > ib {
		t.Fatalf("results missing or out of call order in the next request:\n%s", body)
	}
	if h := w.s.History(); len(h[2].Results) != 2 || h[2].Results[0].ToolCallID != ra.ID {
		t.Fatalf("results = %+v", h[2].Results)
	}
}

func paritySteering(t *testing.T, w *world) {
	hold := w.shell("while [ ! -f go.flag ]; do sleep 0.05; done; echo released")
	w.script(calls(hold), sim.Text("Understood: only a /health endpoint."))
	done := make(chan error, 1)
	go func() {
		_, err := w.s.Submit(context.Background(), "Create a Flask web application with multiple routes")
		done <- err
	}()
	w.waitFor("TOOL_CALL_START", w.kind(agent.EventToolCallStart))
	must(t, w.s.Steer("Actually, just create a single /health endpoint for now"))
	w.writeFile("go.flag", "")
	must(t, <-done)
	contains(t, "the request after steering", w.body(1), "just create a single /health endpoint")
	if ev := w.waitFor("STEERING_INJECTED", w.kind(agent.EventSteeringInjected)); !strings.Contains(ev.Text, "/health") {
		t.Fatalf("STEERING_INJECTED = %+v", ev)
	}
}

// effortMarkers are how each adapter writes low and high effort on the wire.
var effortMarkers = map[string][2]string{
	"openai":    {`"effort":"low"`, `"effort":"high"`},
	"anthropic": {`"budget_tokens":1024`, `"budget_tokens":16384`},
	"gemini":    {`"thinkingBudget":1024`, `"thinkingBudget":24576`},
}

func parityReasoningEffort(t *testing.T, w *world) {
	w.script(sim.Text("thought a little"), sim.Text("thought a lot"))
	w.submit("first")
	must(t, w.s.SetReasoningEffort("high"))
	w.submit("second")
	m := effortMarkers[w.p.name]
	contains(t, "first request", w.body(0), m[0])
	contains(t, "second request", w.body(1), m[1])
}

func paritySubagent(t *testing.T, w *world) {
	spawn, wait := w.spawn("Create child.txt containing 'from child'"), w.wait("agent-1")
	w.script(calls(spawn, wait),
		calls(w.write("child.txt", "from child\n")), sim.Text("child wrote child.txt"), // the child's turns
		sim.Text("The subagent created child.txt."))
	out := w.submit("Spawn a subagent to create child.txt, then review its output")
	if out.Text != "The subagent created child.txt." {
		t.Fatalf("outcome %+v", out)
	}
	if w.file("child.txt") != "from child\n" {
		t.Fatal("the subagent did not write into the shared workspace")
	}
	var res agent.SubagentResult
	must(t, json.Unmarshal([]byte(w.toolEnd(wait.ID).Output), &res))
	if !res.Success || res.Output != "child wrote child.txt" || res.TurnsUsed != 2 {
		t.Fatalf("wait result %+v", res)
	}
	w.mu.Lock()
	children := w.children
	w.mu.Unlock()
	if len(children) != 1 || len(children[0].History()) != 4 || children[0].ID() == w.s.ID() {
		t.Fatalf("children %d", len(children))
	}
	contains(t, "the child's first request", w.body(1), "Create child.txt")
}

func parityLoopDetection(t *testing.T, w *world) {
	w.writeFile("same.txt", "same\n")
	var replies []sim.Reply
	for range 10 {
		r := w.read("same.txt")
		r.ID = "" // the same call every time, ids aside
		replies = append(replies, calls(r))
	}
	w.script(append(replies, sim.Text("Stopping the loop."))...)
	out := w.submit("Read same.txt until something changes")
	ev := w.waitFor("LOOP_DETECTION", w.kind(agent.EventLoopDetection))
	contains(t, "LOOP_DETECTION", ev.Text, "Loop detected")
	contains(t, "the request after the warning", w.body(10), "Loop detected")
	if out.Stop != agent.StopCompleted {
		t.Fatalf("outcome %+v", out)
	}
}

func parityErrorRecovery(t *testing.T, w *world) {
	w.writeFile("present.txt", "here I am\n")
	missing, present := w.read("missing.txt"), w.read("present.txt")
	w.script(calls(missing), calls(present), sim.Text("Found it in present.txt."))
	out := w.submit("Read the notes file")
	if r := w.result(missing.ID); !r.IsError || !strings.Contains(r.Content, "does not exist") {
		t.Fatalf("missing file result %+v", r)
	}
	if r := w.result(present.ID); r.IsError || !strings.Contains(r.Content, "here I am") {
		t.Fatalf("retry result %+v", r)
	}
	if out.Stop != agent.StopCompleted {
		t.Fatalf("outcome %+v", out)
	}
}

func parityEditingFormat(t *testing.T, w *world) {
	w.writeFile("app.txt", "color = red\nsize = 1\nother = red\n")
	w.writeFile("old.txt", "obsolete\n")
	var edit sim.ToolCallReply
	want := map[string]string{"app.txt": "color = blue\nsize = 1\nother = blue\n"}
	switch w.p.name {
	case "openai": // one v4a patch that adds, updates and deletes
		patch := "*** Begin Patch\n*** Add File: new.txt\n+fresh\n*** Update File: app.txt\n@@\n-color = red\n+color = blue\n size = 1\n-other = red\n+other = blue\n*** Delete File: old.txt\n*** End Patch\n"
		edit = w.tc("apply_patch", map[string]any{"input": patch})
		want["new.txt"] = "fresh\n"
	case "anthropic": // old_string/new_string with replace_all
		edit = w.tc("edit_file", map[string]any{"file_path": "app.txt", "old_string": "red", "new_string": "blue", "replace_all": true})
	case "gemini": // gemini-cli's replace: instruction and allow_multiple
		edit = w.tc("edit_file", map[string]any{"file_path": "app.txt", "instruction": "make everything blue",
			"old_string": "red", "new_string": "blue", "allow_multiple": true})
	}
	w.script(calls(edit), sim.Text("Edited."))
	w.submit("Make everything blue")
	if end := w.toolEnd(edit.ID); end.IsError {
		t.Fatalf("edit failed: %s", end.Output)
	}
	for name, content := range want {
		if got := w.file(name); got != content {
			t.Fatalf("%s = %q, want %q", name, got, content)
		}
	}
	if w.p.name == "openai" {
		if ok, _ := w.env.Exists(context.Background(), "old.txt"); ok {
			t.Fatal("old.txt not deleted")
		}
	}
}
