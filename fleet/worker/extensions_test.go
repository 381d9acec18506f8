package worker_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
	"github.com/agentfleet/agentfleet/tools/mcp"
	"github.com/agentfleet/agentfleet/tools/mcp/mcptest"
)

// specServer converts a test server configuration to a spec's server.
func specServer(c mcp.ServerConfig) fleet.MCPServer {
	return fleet.MCPServer{Name: c.Name, Command: c.Command, Args: c.Args, StartTimeout: fleet.Duration(c.StartTimeout)}
}

// sessionEvents reads the events of task id from the start until its
// SESSION_END.
func sessionEvents(t *testing.T, f *fleettest.Fleet, id uuid.UUID) []queue.Event {
	t.Helper()
	ctx := waitCtx(t)
	sub, err := f.Queue.SubscribeEvents(ctx, queue.EventFilter{TaskID: id.String()}, queue.FromStart())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	var evs []queue.Event
	for {
		ev, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("after %d events: %v", len(evs), err)
		}
		evs = append(evs, ev.Event)
		if ev.Kind == fleet.KindSessionEnd {
			return evs
		}
	}
}

// TestTaskCallsAnMCPTool: a task names the reference "everything" server
// and a server that cannot start; the model calls the server's echo tool
// through the pipeline, a post_tool_use hook of the task reports on it, the
// broken server is a WARNING event, and the call is in the events and the
// recorded turns.
func TestTaskCallsAnMCPTool(t *testing.T) {
	t.Parallel()
	everything := mcptest.NPX(t, "everything", mcptest.Everything, "stdio")
	// npx reads the user's npm cache and the registry, which a task's
	// sandbox has neither of (docs/operations.md, "Task sandbox": what an
	// MCP server needs there); this test is about the MCP wiring.
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) { c.Sandbox = worker.SandboxOff }})
	spec := fleettest.Spec("mcp",
		fleettest.Step{Calls: []fleettest.Call{{Name: "mcp__everything__echo", Args: map[string]any{"message": "from the fleet"}}}},
		fleettest.Step{Text: "done: {{results}}"})
	spec.MCPServers = []fleet.MCPServer{specServer(everything), {Name: "broken", Command: "/nonexistent/server"}}
	spec.Hooks = []fleet.Hook{{Event: "post_tool_use", Tool: "mcp__*", Type: "shell", Command: `echo "hook saw $AGENTFLEET_TOOL_NAME"`}}
	id := f.Submit(spec)
	res := succeeded(t, f.WaitDone(id))
	if !strings.Contains(res.FinalText, "from the fleet") || !strings.Contains(res.FinalText, "hook saw mcp__everything__echo") {
		t.Fatalf("final text %q", res.FinalText)
	}
	evs := sessionEvents(t, f, id)
	var warned, ended bool
	for _, ev := range evs {
		var data agent.Event
		_ = json.Unmarshal(ev.Data, &data)
		switch ev.Kind {
		case string(agent.EventWarning):
			warned = warned || strings.Contains(data.Text, `MCP server "broken" could not be started`)
		case string(agent.EventToolCallEnd):
			ended = data.ToolName == "mcp__everything__echo" && !data.IsError && strings.Contains(data.Output, "from the fleet")
		}
	}
	if !warned || !ended {
		t.Fatalf("warning %v, tool call end %v; events: %s", warned, ended, kindsOf(evs))
	}
	turns, err := f.Store.LoadTurns(waitCtx(t), store.LoadTurnsParams{SessionID: id})
	if err != nil || len(turns) != 4 {
		t.Fatalf("%d turns (%v), want 4", len(turns), err)
	}
	var results agent.Turn
	if err := json.Unmarshal(turns[2].Payload, &results); err != nil || len(results.Results) != 1 ||
		!strings.Contains(results.Results[0].Content, "from the fleet") {
		t.Fatalf("tool results turn %s: %v", turns[2].Payload, err)
	}
}

func kindsOf(evs []queue.Event) string {
	k := make([]string, len(evs))
	for i, ev := range evs {
		k[i] = ev.Kind
	}
	return strings.Join(k, ",")
}

// TestRequiredMCPServerThatFailsFailsTheTask: a required server that does
// not start ends the task with the environment reason, naming the server.
func TestRequiredMCPServerThatFailsFailsTheTask(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	spec := fleettest.Spec("required", fleettest.Step{Text: "never"})
	spec.MCPServers = []fleet.MCPServer{{Name: "needed", Command: "sleep", Args: []string{"300"}, Required: true, StartTimeout: fleet.Duration(time.Second)}}
	task := f.WaitDone(f.Submit(spec))
	res := fleettest.Result(t, task)
	if task.State != store.TaskFailed || task.Error != fleet.ReasonEnvironment || !strings.Contains(res.Error, `MCP server "needed"`) {
		t.Fatalf("task %s %q, result error %q", task.State, task.Error, res.Error)
	}
}

// TestTaskExtensionsBeyondTheWorkersBounds: an HTTP server off the
// allowlist, or hooks on a worker that takes none, fail as not allowed.
func TestTaskExtensionsBeyondTheWorkersBounds(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Worker: func(_ int, c *worker.Config) {
		c.MCPHTTPAllowlist = []string{"https://mcp.internal.example/"}
		c.NoTaskHooks = true
	}})
	offList := fleettest.Spec("off list", fleettest.Step{Text: "never"})
	offList.MCPServers = []fleet.MCPServer{{Name: "remote", URL: "https://elsewhere.example/mcp"}}
	hooked := fleettest.Spec("hooked", fleettest.Step{Text: "never"})
	hooked.Hooks = []fleet.Hook{{Event: "pre_tool_use", Type: "shell", Command: "true"}}
	for id, want := range map[uuid.UUID]string{f.Submit(offList): "mcp_http_allowlist", f.Submit(hooked): "no_task_hooks"} {
		task := f.WaitDone(id)
		if res := fleettest.Result(t, task); task.Error != fleet.ReasonNotAllowed || !strings.Contains(res.Error, want) {
			t.Errorf("task %s %q, result error %q; want not_allowed naming %s", task.State, task.Error, res.Error, want)
		}
	}
}

// skillsRepo is a git repository with one skill and one malformed SKILL.md.
func skillsRepo(t *testing.T) string {
	t.Helper()
	dir := gitRepo(t)
	files := map[string]string{
		".agents/skills/changelog/SKILL.md": "---\nname: changelog\ndescription: Add an entry to CHANGELOG.md.\n---\nPut the entry under Unreleased.\n",
		".claude/skills/broken/SKILL.md":    "no front matter here\n",
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"add", "."}, {"-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "skills"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	return dir
}

// TestTaskLoadsARepositorySkill: the skill tool loads a skill of the
// task's repository, and a malformed SKILL.md is a WARNING event naming it.
func TestTaskLoadsARepositorySkill(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1})
	spec := fleettest.Spec("skills",
		fleettest.Step{Calls: []fleettest.Call{{Name: "skill", Args: map[string]any{"name": "changelog"}}}},
		fleettest.Step{Text: "loaded: {{results}}"})
	spec.Environment = fleet.Environment{Repo: skillsRepo(t)}
	id := f.Submit(spec)
	res := succeeded(t, f.WaitDone(id))
	if !strings.Contains(res.FinalText, "Put the entry under Unreleased.") {
		t.Fatalf("final text %q", res.FinalText)
	}
	var warned bool
	for _, ev := range sessionEvents(t, f, id) {
		var data agent.Event
		_ = json.Unmarshal(ev.Data, &data)
		warned = warned || (ev.Kind == string(agent.EventWarning) &&
			strings.Contains(data.Text, "skill file .claude/skills/broken/SKILL.md skipped: it does not start with front matter"))
	}
	if !warned {
		t.Fatal("no WARNING event for the malformed SKILL.md")
	}
}

// TestChildInheritsTheTasksHooks: a child spawned by the model runs under
// its parent's pre_tool_use hook, so spawning does not escape it.
func TestChildInheritsTheTasksHooks(t *testing.T) {
	t.Parallel()
	f := fleettest.Start(t, fleettest.Options{Workers: 1, Slots: 2})
	child := []fleettest.Step{{Calls: []fleettest.Call{fleettest.Shell("echo forbidden-word")}}, {Text: "child saw: {{results}}"}}
	spec := sharedSpec(t, "hooked parent", fanOut([][]fleettest.Step{child})...)
	spec.Hooks = []fleet.Hook{{Event: "pre_tool_use", Tool: "shell", Type: "shell",
		Command: `grep -q forbidden-word && { echo "that word is not allowed" >&2; exit 2; }; exit 0`}}
	res := succeeded(t, f.WaitDone(f.Submit(spec)))
	if !strings.Contains(res.FinalText, "Tool call blocked by a hook: that word is not allowed") {
		t.Fatalf("the child's call was not blocked by the parent's hook:\n%s", res.FinalText)
	}
}
