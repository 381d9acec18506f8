package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/agent/compact"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/profiles"
	"github.com/agentfleet/agentfleet/tools"
)

// spec9Items is the agent's acceptance checklist: one case per behaviour a
// session must have, named "<group>_<what>", the groups numbered 9.1 to 9.11
// as the comments below name them. The cross-provider cases are TestParity's
// and the end-to-end scenario is TestSmoke.
var spec9Items = []matrixCase{
	// 9.1 Core agentic loop
	{name: "9.1_session_created_with_profile_and_env", run: itemSessionCreated},
	{name: "9.1_process_input_runs_the_loop", run: parityMultiStep},
	{name: "9.1_natural_completion", run: itemNaturalCompletion},
	{name: "9.1_round_limit", cfg: agent.Config{Session: agent.SessionConfig{MaxToolRoundsPerInput: 2}}, run: itemRoundLimit},
	{name: "9.1_session_turn_limit", cfg: agent.Config{Session: agent.SessionConfig{MaxTurns: 2}}, run: itemTurnLimit},
	{name: "9.1_abort_kills_processes_and_closes", run: itemAbort},
	{name: "9.1_loop_detection", run: parityLoopDetection},
	{name: "9.1_multiple_sequential_inputs", run: itemSequentialInputs},
	// 9.2 Provider profiles
	{name: "9.2_native_toolset", run: itemNativeToolset},
	{name: "9.2_provider_specific_system_prompt", run: itemSystemPromptBase},
	{name: "9.2_custom_tool_registration", run: itemCustomTool},
	{name: "9.2_custom_tool_overrides_profile_tool", run: itemCustomOverride},
	// 9.3 Tool execution
	{name: "9.3_dispatch_through_registry", run: parityShellExecution},
	{name: "9.3_unknown_tool_error_result", run: itemUnknownTool},
	{name: "9.3_arguments_validated_against_schema", run: itemSchemaValidation},
	{name: "9.3_tool_error_is_error_result", run: parityErrorRecovery},
	{name: "9.3_parallel_tool_execution", run: parityParallel},
	// 9.4 Execution environment
	{name: "9.4_local_environment_file_and_command_operations", run: itemLocalOps},
	{name: "9.4_timeout_overridable_per_call", cfg: agent.Config{Session: agent.SessionConfig{DefaultCommandTimeout: time.Second}}, run: parityShellTimeout},
	{name: "9.4_timeout_sigterm_then_sigkill", cfg: agent.Config{Session: agent.SessionConfig{DefaultCommandTimeout: 500 * time.Millisecond}}, run: itemSigtermSigkill},
	{name: "9.4_env_var_filtering", run: itemEnvFiltering},
	{name: "9.4_custom_environment_implementable", run: itemCustomEnv},
	// 9.5 Tool output truncation
	{name: "9.5_character_truncation_first", run: itemCharTruncationFirst},
	{name: "9.5_line_truncation_second", run: itemLineTruncation},
	{name: "9.5_truncation_marker_and_full_output_in_event", run: parityTruncation},
	{name: "9.5_default_limits", run: itemDefaultLimits},
	{name: "9.5_limits_overridable", cfg: agent.Config{Session: agent.SessionConfig{
		ToolOutputLimits: map[string]int{"read_file": 1000}, ToolLineLimits: map[string]int{"shell": 10}}}, run: itemLimitsOverride},
	// 9.6 Steering
	{name: "9.6_steer_injected_after_tool_round", run: paritySteering},
	{name: "9.6_follow_up_after_completion", run: itemFollowUp},
	{name: "9.6_steering_turn_in_history_as_user_message", run: itemSteeringTurn},
	// 9.7 Reasoning effort
	{name: "9.7_effort_passed_through_and_changed_next_call", cfg: agent.Config{Session: agent.SessionConfig{ReasoningEffort: "low"}}, run: parityReasoningEffort},
	{name: "9.7_valid_values", run: itemEffortValues},
	// 9.8 System prompts
	{name: "9.8_prompt_layers", cfg: agent.Config{Session: agent.SessionConfig{UserInstructions: "USER-OVERRIDE-LAST"}}, run: itemPromptLayers},
	// 9.9 Subagents
	{name: "9.9_spawn_share_env_independent_history_results", run: paritySubagent},
	{name: "9.9_depth_limit", run: itemDepthLimit},
	{name: "9.9_send_input_wait_close", run: itemSendInputClose},
	// 9.10 Event system
	{name: "9.10_all_event_kinds_and_lifecycle", cfg: agent.Config{Session: agent.SessionConfig{MaxToolRoundsPerInput: 1, LoopDetectionWindow: 1, Context: compact.Config{Disabled: true}}}, opts: []profiles.Option{profiles.WithContextWindow(100)}, run: itemAllEvents},
	{name: "9.10_tool_call_end_full_output", run: parityTruncation},
	// 9.11 Error handling
	{name: "9.11_transient_errors_retried", run: itemTransientRetry},
	{name: "9.11_authentication_error_closes", run: itemAuthError},
	{name: "9.11_context_overflow", opts: []profiles.Option{profiles.WithContextWindow(20000)}, run: itemContextOverflow},
	{name: "9.11_graceful_shutdown_order", run: itemGracefulShutdown},
}

// TestSpec9 runs every checklist item for each provider through
// the simulated provider (llm/sim) in its wire format with the real adapter, profile and tools.
func TestSpec9(t *testing.T) { runMatrix(t, spec9Items) }

func itemSessionCreated(t *testing.T, w *world) {
	if w.s.ID() == "" || w.s.State() != agent.StateIdle || w.s.Env().WorkingDir() != w.dir {
		t.Fatalf("id %q state %s dir %s", w.s.ID(), w.s.State(), w.s.Env().WorkingDir())
	}
	w.script(sim.Text("ready"))
	w.submit("hello")
	contains(t, "request", w.body(0), w.p.model)
}

func itemNaturalCompletion(t *testing.T, w *world) {
	w.script(sim.Text("Nothing to do."))
	out := w.submit("anything to do?")
	if out.Stop != agent.StopCompleted || out.Turns != 1 || out.Rounds != 0 || len(w.srv.Requests()) != 1 {
		t.Fatalf("outcome %+v", out)
	}
}

func itemRoundLimit(t *testing.T, w *world) {
	w.writeFile("f.txt", "x\n")
	w.script(calls(w.read("f.txt")), calls(w.glob("*.txt")), calls(w.read("f.txt")))
	out := w.submit("look around")
	if out.Stop != agent.StopRoundLimit || out.Rounds != 2 || out.State != agent.StateIdle {
		t.Fatalf("outcome %+v", out)
	}
	if ev := w.waitFor("TURN_LIMIT", w.kind(agent.EventTurnLimit)); ev.Round != 2 {
		t.Fatalf("TURN_LIMIT %+v", ev)
	}
	if n := len(w.srv.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

func itemTurnLimit(t *testing.T, w *world) {
	w.writeFile("f.txt", "x\n")
	w.script(sim.Text("one"), calls(w.read("f.txt")), sim.Text("never"))
	w.submit("first")
	out := w.submit("second")
	if out.Stop != agent.StopTurnLimit || out.State != agent.StateIdle {
		t.Fatalf("outcome %+v", out)
	}
	if n := len(w.srv.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2 (turns counted across inputs)", n)
	}
}

// processGone reports whether the pid written to path no longer runs.
func processGone(t *testing.T, path string) bool {
	b, err := os.ReadFile(path)
	must(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	must(t, err)
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	return p.Signal(syscallZero) != nil
}

func itemAbort(t *testing.T, w *world) {
	w.script(calls(w.shellWithTimeout("echo $$ > pid.txt; sleep 60", 120000)))
	done := make(chan error, 1)
	go func() { _, err := w.s.Submit(context.Background(), "run forever"); done <- err }()
	w.waitFor("TOOL_CALL_START", w.kind(agent.EventToolCallStart))
	waitFile(t, filepath.Join(w.dir, "pid.txt"))
	w.s.Abort()
	if err := <-done; !errors.Is(err, agent.ErrAborted) {
		t.Fatalf("Submit err = %v", err)
	}
	if w.s.State() != agent.StateClosed {
		t.Fatalf("state %s", w.s.State())
	}
	if !processGone(t, filepath.Join(w.dir, "pid.txt")) {
		t.Fatal("the shell process survived the abort")
	}
	w.waitFor("SESSION_END", w.kind(agent.EventSessionEnd))
}

// waitFile waits up to 30 s for a command to write a whole line to path
// (the command, not the test, decides when; no event announces it).
func waitFile(t *testing.T, path string) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, path+" to hold a line", func() bool {
		b, err := os.ReadFile(path)
		return err == nil && strings.HasSuffix(string(b), "\n")
	})
}

func itemSequentialInputs(t *testing.T, w *world) {
	w.script(sim.Text("first answer"), sim.Text("second answer"))
	if out := w.submit("one"); out.Text != "first answer" {
		t.Fatal(out.Text)
	}
	if out := w.submit("two"); out.Text != "second answer" {
		t.Fatal(out.Text)
	}
	body := w.body(1)
	contains(t, "second request", body, "first answer")
	contains(t, "second request", body, "two")
}

// nativeTools are the tool names each profile must offer on the wire.
var nativeTools = map[string][]string{
	"openai":    {"read_file", "apply_patch", "write_file", "shell", "grep", "glob", "spawn_agent", "send_input", "wait", "close_agent"},
	"anthropic": {"read_file", "write_file", "edit_file", "shell", "grep", "glob", "spawn_agent", "send_input", "wait", "close_agent"},
	"gemini":    {"read_file", "read_many_files", "write_file", "edit_file", "shell", "grep", "glob", "list_dir", "spawn_agent", "send_input", "wait", "close_agent"},
}

func itemNativeToolset(t *testing.T, w *world) {
	w.script(sim.Text("ok"))
	w.submit("hi")
	body := w.body(0)
	for _, name := range nativeTools[w.p.name] {
		contains(t, "tools on the wire", body, `"`+name+`"`)
	}
	switch w.p.name {
	case "openai":
		if strings.Contains(body, `"edit_file"`) {
			t.Fatal("openai profile offers edit_file")
		}
	case "anthropic":
		if strings.Contains(body, `"apply_patch"`) {
			t.Fatal("anthropic profile offers apply_patch")
		}
		contains(t, "tools", body, `"old_string"`)
	}
}

// baseMarkers are phrases of each profile's own base instructions.
var baseMarkers = map[string]string{
	"openai":    "Editing files with apply_patch",
	"anthropic": "Editing with edit_file",
	"gemini":    "GEMINI.md and AGENTS.md files",
}

func itemSystemPromptBase(t *testing.T, w *world) {
	w.script(sim.Text("ok"))
	w.submit("hi")
	contains(t, "system prompt", w.body(0), baseMarkers[w.p.name])
	for other, m := range baseMarkers {
		if other != w.p.name && strings.Contains(w.body(0), m) {
			t.Fatalf("prompt has %s's base instructions", other)
		}
	}
}

func runTestsTool(text string) tools.Tool {
	return tools.Tool{Name: "run_tests", Description: "Run the project's test suite",
		Parameters: json.RawMessage(`{"type":"object","properties":{"filter":{"type":"string"}}}`),
		Run:        func(context.Context, tools.Call) (tools.Output, error) { return tools.Output{Text: text}, nil }}
}

func itemCustomTool(t *testing.T, w *world) {
	w.s.Registry().Register(runTestsTool("all 12 tests passed"))
	c := w.tc("run_tests", map[string]any{"filter": "x"})
	w.script(calls(c), sim.Text("Tests pass."))
	w.submit("run the tests")
	contains(t, "tools on the wire", w.body(0), `"run_tests"`)
	contains(t, "custom tool result", w.toolEnd(c.ID).Output, "all 12 tests passed")
}

func itemCustomOverride(t *testing.T, w *world) {
	override := tools.Tool{Name: "read_file", Description: "custom reader",
		Parameters: json.RawMessage(`{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}`),
		Run: func(context.Context, tools.Call) (tools.Output, error) {
			return tools.Output{Text: "from the custom reader"}, nil
		}}
	w.s.Registry().Register(override)
	c := w.read("whatever.txt")
	w.script(calls(c), sim.Text("ok"))
	w.submit("read")
	contains(t, "overridden tool", w.toolEnd(c.ID).Output, "from the custom reader")
	contains(t, "definitions on the wire", w.body(0), "custom reader")
}

func itemUnknownTool(t *testing.T, w *world) {
	c := w.tc("teleport", map[string]any{"to": "mars"})
	w.script(calls(c), sim.Text("That tool does not exist; stopping."))
	out := w.submit("go")
	r := w.result(c.ID)
	if !r.IsError || !strings.Contains(r.Content, "Unknown tool") || !strings.Contains(r.Content, "teleport") {
		t.Fatalf("result %+v", r)
	}
	if out.Stop != agent.StopCompleted {
		t.Fatalf("outcome %+v", out)
	}
}

func itemSchemaValidation(t *testing.T, w *world) {
	missing := w.tc("read_file", map[string]any{"path": "x"}) // wrong parameter name
	badJSON := sim.ToolCallReply{ID: w.id(), Name: "read_file", Arguments: `{"file_path": "x"`}
	w.script(calls(missing), calls(badJSON), sim.Text("I will fix my arguments."))
	out := w.submit("read x")
	if r := w.result(missing.ID); !r.IsError || !strings.Contains(r.Content, "file_path") {
		t.Fatalf("schema failure result %+v", r)
	}
	if r := w.result(badJSON.ID); !r.IsError {
		t.Fatalf("invalid JSON result %+v", r)
	}
	if out.Stop != agent.StopCompleted {
		t.Fatalf("outcome %+v", out)
	}
}

func itemLocalOps(t *testing.T, w *world) {
	wr, rd, sh := w.write("dir/a.txt", "one\n"), w.read("dir/a.txt"), w.shell("ls dir && wc -l < dir/a.txt")
	w.script(calls(wr), calls(rd), calls(sh), sim.Text("done"))
	w.submit("write, read, list")
	contains(t, "read", w.toolEnd(rd.ID).Output, "one")
	contains(t, "shell", w.toolEnd(sh.ID).Output, "a.txt")
}

func itemSigtermSigkill(t *testing.T, w *world) {
	// The command traps SIGTERM and keeps running: only SIGKILL ends it. On a loaded machine
	// bash may not have set the trap when the world's 500ms timeout fires; the item then runs
	// again in a session whose timeout is longer (at most 8 s, well inside the loop's 30 s).
	const command = "trap 'echo got-sigterm' TERM; echo trap-set; for i in $(seq 1 300); do sleep 0.1; done; echo not-killed"
	var end agent.Event
	testenv.UntilStarted(t, 500*time.Millisecond, 8*time.Second, func(timeout time.Duration) bool {
		if timeout > 500*time.Millisecond {
			w = newWorld(t, w.p, agent.Config{Session: agent.SessionConfig{DefaultCommandTimeout: timeout}})
		}
		end, _ = w.runShell(command)
		return strings.Contains(end.Output, "trap-set")
	})
	contains(t, "output", end.Output, "got-sigterm")
	contains(t, "output", end.Output, "timed out")
	if strings.Contains(end.Output, "not-killed") {
		t.Fatal("the process survived SIGTERM and SIGKILL")
	}
}

func itemEnvFiltering(t *testing.T, w *world) {
	end, _ := w.runShell("env")
	out := end.Output
	contains(t, "env", out, "AGENTFLEET_PROBE_PLAIN=visible-value")
	if strings.Contains(out, "must-not-leak") {
		t.Fatal("a *_API_KEY variable reached the command")
	}
}

// countingEnv is a consumer-written Environment: a wrapper counting execs.
type countingEnv struct {
	execenv.Environment
	mu    sync.Mutex
	execs []string
}

func (c *countingEnv) Exec(ctx context.Context, req execenv.ExecRequest) (execenv.ExecResult, error) {
	c.mu.Lock()
	c.execs = append(c.execs, req.Command)
	c.mu.Unlock()
	return c.Environment.Exec(ctx, req)
}

func itemCustomEnv(t *testing.T, w *world) {
	env := &countingEnv{Environment: w.env}
	profile, err := profiles.ForProvider(w.p.name, w.p.model)
	must(t, err)
	s, err := agent.New(agent.Config{Client: w.p.dial(t, w.srv.URL()), Profile: profile, Env: env})
	must(t, err)
	defer s.Abort()
	c := w.shell("echo via-wrapper")
	w.script(calls(c), sim.Text("ok"))
	if _, err := s.Submit(ctx30(t), "run"); err != nil {
		t.Fatal(err)
	}
	env.mu.Lock()
	defer env.mu.Unlock()
	found := false
	for _, cmd := range env.execs {
		found = found || cmd == "echo via-wrapper"
	}
	if !found {
		t.Fatalf("the custom environment did not run the command: %v", env.execs)
	}
}

func itemCharTruncationFirst(t *testing.T, w *world) {
	// Two lines of 40,000 characters: few lines, far too many characters.
	end, r := w.runShell("head -c 40000 /dev/zero | tr '\\0' a; echo; head -c 40000 /dev/zero | tr '\\0' b; echo")
	contains(t, "result", r.Content, "characters were removed from the middle")
	if len(end.Output) < 80000 {
		t.Fatal("event lost output")
	}
}

func itemLineTruncation(t *testing.T, w *world) {
	end, r := w.runShell("seq 1 1000")
	contains(t, "result", r.Content, "lines omitted")
	contains(t, "event", end.Output, "\n500\n")
}

func itemDefaultLimits(t *testing.T, w *world) {
	w.writeFile("big.txt", strings.Repeat("y", 80000))
	c := w.read("big.txt")
	w.script(calls(c), sim.Text("ok"))
	w.submit("read")
	content := w.result(c.ID).Content
	if n := strings.Count(content, "y"); n < 49900 || n > 50000 {
		t.Fatalf("read_file kept %d characters, want the 50,000 default", n)
	}
}

func itemLimitsOverride(t *testing.T, w *world) {
	w.writeFile("big.txt", strings.Repeat("z", 5000))
	rd, sh := w.read("big.txt"), w.shell("seq 1 100")
	w.script(calls(rd), calls(sh), sim.Text("ok"))
	w.submit("read and count")
	if n := strings.Count(w.result(rd.ID).Content, "z"); n < 990 || n > 1000 {
		t.Fatalf("read_file kept %d characters, want 1000", n)
	}
	contains(t, "shell result", w.result(sh.ID).Content, "lines omitted")
}

func itemFollowUp(t *testing.T, w *world) {
	hold := w.shell("while [ ! -f go.flag ]; do sleep 0.05; done")
	w.script(calls(hold), sim.Text("first done"), sim.Text("follow-up done"))
	done := make(chan agent.Outcome, 1)
	go func() { out, _ := w.s.Submit(context.Background(), "first"); done <- out }()
	w.waitFor("TOOL_CALL_START", w.kind(agent.EventToolCallStart))
	must(t, w.s.FollowUp("and now the follow-up"))
	w.writeFile("go.flag", "")
	out := <-done
	if out.Text != "follow-up done" {
		t.Fatalf("outcome %+v", out)
	}
	contains(t, "the follow-up request", w.body(2), "and now the follow-up")
	if strings.Contains(w.body(1), "and now the follow-up") {
		t.Fatal("the follow-up was injected before the first input completed")
	}
}

func itemSteeringTurn(t *testing.T, w *world) {
	must(t, w.s.Steer("use tabs, not spaces"))
	w.script(sim.Text("ok"))
	w.submit("format the code")
	h := w.s.History()
	if h[1].Kind != agent.TurnSteering || h[1].Text != "use tabs, not spaces" {
		t.Fatalf("history %v", turnKinds(h))
	}
	body := w.body(0)
	i := strings.LastIndex(body, "use tabs, not spaces")
	if i < 0 || strings.Contains(body[i:], `"role":"assistant"`) {
		t.Fatalf("steering not sent as a user message:\n%s", body)
	}
}

func itemEffortValues(t *testing.T, w *world) {
	for _, e := range []string{"low", "medium", "high", ""} {
		if err := w.s.SetReasoningEffort(e); err != nil {
			t.Fatalf("%q: %v", e, err)
		}
	}
	if err := w.s.SetReasoningEffort("ultra"); err == nil {
		t.Fatal("invalid effort accepted")
	}
	w.script(sim.Text("ok"))
	w.submit("hi")
	for _, marker := range effortMarkers[w.p.name] {
		if strings.Contains(w.body(0), marker) {
			t.Fatalf("null effort sent %s", marker)
		}
	}
}

func itemPromptLayers(t *testing.T, w *world) {
	w.writeFile("AGENTS.md", "AGENTS-DOC-MARKER\n")
	w.writeFile("CLAUDE.md", "CLAUDE-DOC-MARKER\n")
	w.writeFile("GEMINI.md", "GEMINI-DOC-MARKER\n")
	w.writeFile(".codex/instructions.md", "CODEX-DOC-MARKER\n")
	w.script(sim.Text("ok"))
	w.submit("hi")
	body := w.body(0)
	for _, s := range []string{baseMarkers[w.p.name], "<environment>", "Working directory: " + w.dir, "Platform: linux",
		"Model: " + w.p.model, "Today's date:", "Is git repository: false", "- shell:", "AGENTS-DOC-MARKER", "USER-OVERRIDE-LAST"} {
		contains(t, "system prompt", body, s)
	}
	own := map[string]string{"openai": "CODEX-DOC-MARKER", "anthropic": "CLAUDE-DOC-MARKER", "gemini": "GEMINI-DOC-MARKER"}
	for name, marker := range own {
		if (name == w.p.name) != strings.Contains(body, marker) {
			t.Fatalf("%s: profile %s loaded=%v", marker, w.p.name, strings.Contains(body, marker))
		}
	}
	if strings.Index(body, "USER-OVERRIDE-LAST") < strings.Index(body, "AGENTS-DOC-MARKER") {
		t.Fatal("user instructions are not after the project docs")
	}
}

func itemDepthLimit(t *testing.T, w *world) {
	profile, err := profiles.ForProvider(w.p.name, w.p.model)
	must(t, err)
	child, err := agent.New(agent.Config{Client: w.p.dial(t, w.srv.URL()), Profile: profile, Env: w.env, Depth: 1})
	must(t, err)
	defer child.Abort()
	c := w.spawn("go deeper")
	w.script(calls(c), sim.Text("I did it myself."))
	if _, err := child.Submit(ctx30(t), "nest"); err != nil {
		t.Fatal(err)
	}
	var r llm.ToolResult
	for _, turn := range child.History() {
		for _, res := range turn.Results {
			r = res
		}
	}
	// A session that may not spawn has no subagent tools (they are neither
	// offered nor described), so the call is refused as an unknown tool.
	if !r.IsError || !strings.Contains(r.Content, `Unknown tool: "spawn_agent"`) {
		t.Fatalf("result %+v", r)
	}
}

func itemSendInputClose(t *testing.T, w *world) {
	spawn, wait1 := w.spawn("say first"), w.wait("agent-1")
	send := w.tc("send_input", map[string]any{"agent_id": "agent-1", "message": "say second"})
	wait2 := w.wait("agent-1")
	closeIt := w.tc("close_agent", map[string]any{"agent_id": "agent-1"})
	w.script(calls(spawn, wait1), sim.Text("first from child"),
		calls(send, wait2), sim.Text("second from child"),
		calls(closeIt), sim.Text("closed"))
	w.submit("talk to a subagent")
	contains(t, "first wait", w.toolEnd(wait1.ID).Output, "first from child")
	contains(t, "second wait", w.toolEnd(wait2.ID).Output, "second from child")
	contains(t, "close", w.toolEnd(closeIt.ID).Output, `"closed"`)
	contains(t, "send_input", w.toolEnd(send.ID).Output, "delivered")
}

func itemAllEvents(t *testing.T, w *world) {
	// A small window (WARNING), window 1 loop detection (LOOP_DETECTION), a
	// round limit (TURN_LIMIT), steering, a streaming shell, then Abort.
	hold := w.shell("echo streamed; while [ ! -f go.flag ]; do sleep 0.05; done")
	w.script(sim.Reply{Text: "working on it", ToolCalls: []sim.ToolCallReply{hold}})
	done := make(chan struct{})
	go func() { defer close(done); _, _ = w.s.Submit(context.Background(), "do it") }()
	w.waitFor("TOOL_CALL_START", w.kind(agent.EventToolCallStart))
	must(t, w.s.Steer("steer"))
	w.writeFile("go.flag", "")
	<-done
	w.script(sim.Reply{Failure: &sim.Failure{Kind: llm.ErrInvalidRequest}})
	_, _ = w.s.Submit(ctx30(t), "fail")
	w.waitFor("SESSION_END", w.kind(agent.EventSessionEnd))
	evs := w.Events()
	for _, k := range []agent.EventKind{agent.EventSessionStart, agent.EventUserInput, agent.EventAssistantTextStart,
		agent.EventAssistantTextDelta, agent.EventAssistantTextEnd, agent.EventToolCallStart, agent.EventToolCallOutput, agent.EventToolCallEnd,
		agent.EventSteeringInjected, agent.EventTurnLimit, agent.EventLoopDetection, agent.EventWarning, agent.EventError,
		agent.EventSessionEnd} {
		if countKind(evs, k) == 0 {
			t.Errorf("no %s event; got %v", k, kinds(evs))
		}
	}
	if evs[0].Kind != agent.EventSessionStart || evs[len(evs)-1].Kind != agent.EventSessionEnd {
		t.Fatalf("lifecycle events do not bracket the session: %v", kinds(evs))
	}
	for i, ev := range evs {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("seq gap at %d: %d", i, ev.Seq)
		}
	}
}

func itemTransientRetry(t *testing.T, w *world) {
	w.script(sim.Fail(llm.ErrOverloaded), sim.Text("after the retry"))
	out := w.submit("hi")
	if out.Text != "after the retry" || len(w.srv.Requests()) != 2 {
		t.Fatalf("outcome %+v, %d requests", out, len(w.srv.Requests()))
	}
}

func itemAuthError(t *testing.T, w *world) {
	w.script(sim.Fail(llm.ErrAuthentication), sim.Text("never"))
	_, err := w.s.Submit(ctx30(t), "hi")
	if llm.KindOf(err) != llm.ErrAuthentication || w.s.State() != agent.StateClosed {
		t.Fatalf("err %v state %s", err, w.s.State())
	}
	if n := len(w.srv.Requests()); n != 1 {
		t.Fatalf("authentication error retried: %d requests", n)
	}
	ev := w.waitFor("ERROR", w.kind(agent.EventError))
	if ev.ErrorKind != llm.ErrAuthentication {
		t.Fatalf("ERROR %+v", ev)
	}
}

// itemContextOverflow: our deviation from the spec (which closes the
// session): a context overflow is the spec's WARNING plus a compaction and
// one retry, and the session goes on.
func itemContextOverflow(t *testing.T, w *world) {
	w.script(sim.Text("first answer"))
	w.submit("start")
	w.script(sim.Fail(llm.ErrContextLength), sim.Text("notes on the conversation"), sim.Text("after compaction"))
	out := w.submit("overflow")
	if out.Text != "after compaction" || w.s.State() != agent.StateIdle {
		t.Fatalf("outcome %+v, state %s", out, w.s.State())
	}
	ev := w.waitFor("WARNING", w.kind(agent.EventWarning))
	if !strings.HasPrefix(ev.Text, "Context usage at ~") || !strings.HasSuffix(ev.Text, "% of context window") {
		t.Fatalf("WARNING text %q is not the spec's", ev.Text)
	}
	end := w.waitFor("COMPACTION_END", w.kind(agent.EventCompactionEnd))
	// The conversation is too short for a summary to make it smaller; the
	// summary was asked for (it took the scripted notes) and refused.
	if end.Context.Reason != compact.ReasonContextLength || end.Context.Error == "" {
		t.Fatalf("COMPACTION_END %+v", end.Context)
	}
	if countKind(w.Events(), agent.EventError) != 0 {
		t.Fatalf("an overflow emitted ERROR: %v", kinds(w.Events()))
	}
}

func itemGracefulShutdown(t *testing.T, w *world) {
	spawn, wait := w.spawn("hold"), w.wait("agent-1")
	w.script(calls(spawn, wait),
		calls(w.shellWithTimeout("echo $$ > child-pid.txt; sleep 60", 120000))) // the child's command
	done := make(chan error, 1)
	go func() { _, err := w.s.Submit(context.Background(), "start"); done <- err }()
	waitFile(t, filepath.Join(w.dir, "child-pid.txt"))
	w.s.Abort()
	if err := <-done; !errors.Is(err, agent.ErrAborted) {
		t.Fatalf("Submit err %v", err)
	}
	w.mu.Lock()
	child := w.children[0]
	w.mu.Unlock()
	if child.State() != agent.StateClosed || w.s.State() != agent.StateClosed {
		t.Fatalf("child %s parent %s", child.State(), w.s.State())
	}
	if !processGone(t, filepath.Join(w.dir, "child-pid.txt")) {
		t.Fatal("the subagent's command survived shutdown")
	}
	w.waitFor("SESSION_END", w.kind(agent.EventSessionEnd))
	<-w.done // the stream ends after SESSION_END
	evs := w.Events()
	if last := evs[len(evs)-1]; last.Kind != agent.EventSessionEnd || last.State != agent.StateClosed {
		t.Fatalf("last event %+v", last)
	}
}
