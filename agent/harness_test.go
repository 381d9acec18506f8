package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/llm/gemini"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/llm/openai"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/profiles"
)

// provider is one row of the cross-provider matrix: how to reach the simulated provider in
// that provider's wire format through the real adapter, and how that
// provider's profile spells tool arguments.
type provider struct {
	name  string
	model string
	dial  func(t *testing.T, url string) llm.Client
}

var providers = []provider{
	{"openai", "gpt-5.2-codex", func(t *testing.T, url string) llm.Client {
		c, err := openai.New(openai.Config{BaseURL: url + "/v1", APIKey: "sk-test", Retry: fastRetry()})
		must(t, err)
		return c
	}},
	{"anthropic", "claude-sonnet-4-5", func(t *testing.T, url string) llm.Client {
		c, err := anthropic.New(anthropic.Config{BaseURL: url, APIKey: "sk-ant-test", Retry: fastRetry()})
		must(t, err)
		return c
	}},
	{"gemini", "gemini-2.5-pro", func(t *testing.T, url string) llm.Client {
		c, err := gemini.New(gemini.Config{BaseURL: url, APIKey: "AIza-test", Retry: fastRetry()})
		must(t, err)
		return c
	}},
}

func fastRetry() llm.RetryPolicy {
	p, _ := llmtest.FastRetry(2)
	return p
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// forEachProvider runs f as a parallel subtest per provider.
func forEachProvider(t *testing.T, f func(t *testing.T, p provider)) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			f(t, p)
		})
	}
}

// world is one session over the simulated provider, a real Local environment in a temp
// workspace, and the real profile of a provider. Events are collected in
// the background.
type world struct {
	t   *testing.T
	p   provider
	srv *sim.Server
	s   *agent.Session
	env execenv.Environment
	dir string

	calls atomic.Int32

	mu       sync.Mutex
	events   []agent.Event
	children []*agent.Session
	changed  chan struct{}
	done     chan struct{}
}

func newWorld(t *testing.T, p provider, cfg agent.Config, opts ...profiles.Option) *world {
	t.Helper()
	srv := sim.NewServer()
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	must(t, err)
	t.Cleanup(func() { _ = env.Cleanup(context.Background()) })
	profile, err := profiles.ForProvider(p.name, p.model, opts...)
	must(t, err)
	w := &world{t: t, p: p, srv: srv, env: env, dir: dir, changed: make(chan struct{}), done: make(chan struct{})}
	cfg.Client, cfg.Profile, cfg.Env = p.dial(t, srv.URL()), profile, env
	cfg.OnSubagent = func(c *agent.Session) {
		w.mu.Lock()
		w.children = append(w.children, c)
		w.mu.Unlock()
	}
	w.s, err = agent.New(cfg)
	must(t, err)
	sub := w.s.Subscribe()
	go w.collect(sub)
	t.Cleanup(func() {
		w.s.Abort()
		<-w.done
	})
	return w
}

func (w *world) collect(sub *agent.Subscription) {
	defer close(w.done)
	for ev := range sub.All(context.Background()) {
		w.mu.Lock()
		w.events = append(w.events, ev)
		close(w.changed)
		w.changed = make(chan struct{})
		w.mu.Unlock()
	}
}

// Events returns the events so far.
func (w *world) Events() []agent.Event {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]agent.Event(nil), w.events...)
}

// inputDone waits for the INPUT_DONE of the one input submitted, so that
// Events holds all of its events: Submit returns before the subscriber
// has received the last ones.
func (w *world) inputDone() {
	w.t.Helper()
	w.waitFor("the input's end", w.kind(agent.EventInputDone))
}

// waitFor waits (30 s at most) for an event matching ok and returns it.
func (w *world) waitFor(what string, ok func(agent.Event) bool) agent.Event {
	w.t.Helper()
	ctx := ctx30(w.t)
	seen := 0
	for {
		w.mu.Lock()
		evs, ch := w.events[seen:], w.changed
		w.mu.Unlock()
		for _, ev := range evs {
			if ok(ev) {
				return ev
			}
		}
		seen += len(evs)
		select {
		case <-ch:
		case <-ctx.Done():
			w.t.Fatalf("no event %s; events: %v", what, kinds(w.Events()))
		}
	}
}

func (w *world) kind(k agent.EventKind) func(agent.Event) bool {
	return func(ev agent.Event) bool { return ev.Kind == k }
}

// toolEnd returns the TOOL_CALL_END of the call with this id.
func (w *world) toolEnd(id string) agent.Event {
	return w.waitFor("TOOL_CALL_END "+id, func(ev agent.Event) bool { return ev.Kind == agent.EventToolCallEnd && ev.CallID == id })
}

// script enqueues model replies.
func (w *world) script(replies ...sim.Reply) { w.srv.Enqueue(replies...) }

// submit runs one input to completion and fails the test on error.
func (w *world) submit(input string) agent.Outcome {
	w.t.Helper()
	out, err := w.s.Submit(ctx30(w.t), input)
	if err != nil {
		w.t.Fatalf("Submit(%q): %v", input, err)
	}
	return out
}

// body returns the JSON body of the i-th model request (negative: from the end).
func (w *world) body(i int) string {
	w.t.Helper()
	reqs := w.srv.Requests()
	if i < 0 {
		i += len(reqs)
	}
	if i < 0 || i >= len(reqs) {
		w.t.Fatalf("no request %d (have %d)", i, len(reqs))
	}
	// Go's JSON encoder writes <, > and & as \u escapes; undo that so
	// assertions can use the prompt's own text.
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(reqs[i].Body))
}

func (w *world) file(name string) string {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.dir, name))
	if err != nil {
		w.t.Fatalf("read %s: %v", name, err)
	}
	return string(b)
}

func (w *world) writeFile(name, content string) {
	w.t.Helper()
	path := filepath.Join(w.dir, name)
	must(w.t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(w.t, os.WriteFile(path, []byte(content), 0o644))
}

// result returns the model-facing result recorded in history for a call.
func (w *world) result(id string) llm.ToolResult {
	w.t.Helper()
	for _, t := range w.s.History() {
		for _, r := range t.Results {
			if r.ToolCallID == id {
				return r
			}
		}
	}
	w.t.Fatalf("no result for call %s", id)
	return llm.ToolResult{}
}

// --- tool calls spelled the way each profile's tools want them ---

func (w *world) id() string { return fmt.Sprintf("call_%d", w.calls.Add(1)) }

func (w *world) tc(name string, args map[string]any) sim.ToolCallReply {
	b, err := json.Marshal(args)
	must(w.t, err)
	return sim.ToolCallReply{ID: w.id(), Name: name, Arguments: string(b)}
}

func calls(cs ...sim.ToolCallReply) sim.Reply { return sim.Reply{ToolCalls: cs} }

func (w *world) read(path string) sim.ToolCallReply {
	return w.tc("read_file", map[string]any{"file_path": path})
}

func (w *world) write(path, content string) sim.ToolCallReply {
	return w.tc("write_file", map[string]any{"file_path": path, "content": content})
}

// edit replaces one whole line by newLines in the profile's native editing
// format (a v4a patch for openai, edit_file for the others).
func (w *world) edit(path, oldLine string, newLines ...string) sim.ToolCallReply {
	newText := strings.Join(newLines, "\n")
	switch w.p.name {
	case "openai":
		patch := fmt.Sprintf("*** Begin Patch\n*** Update File: %s\n@@\n-%s\n+%s\n*** End Patch\n", path, oldLine, strings.Join(newLines, "\n+"))
		return w.tc("apply_patch", map[string]any{"input": patch})
	case "gemini":
		return w.tc("edit_file", map[string]any{"file_path": path, "instruction": "apply the requested change",
			"old_string": oldLine, "new_string": newText})
	}
	return w.tc("edit_file", map[string]any{"file_path": path, "old_string": oldLine, "new_string": newText})
}

func (w *world) shell(command string) sim.ToolCallReply {
	return w.tc("shell", map[string]any{"command": command})
}

// shellWithTimeout sets the per-call timeout where the profile has one.
func (w *world) shellWithTimeout(command string, ms int) sim.ToolCallReply {
	switch w.p.name {
	case "openai":
		return w.tc("shell", map[string]any{"command": command, "timeout_ms": ms})
	case "anthropic":
		return w.tc("shell", map[string]any{"command": command, "timeout": ms})
	}
	return w.shell(command) // gemini-cli's shell has no timeout parameter
}

func (w *world) grep(pattern string) sim.ToolCallReply {
	if w.p.name == "anthropic" {
		return w.tc("grep", map[string]any{"pattern": pattern, "output_mode": "content"})
	}
	return w.tc("grep", map[string]any{"pattern": pattern})
}

func (w *world) glob(pattern string) sim.ToolCallReply {
	return w.tc("glob", map[string]any{"pattern": pattern})
}

func (w *world) spawn(task string) sim.ToolCallReply {
	return w.tc("spawn_agent", map[string]any{"task": task})
}

func (w *world) wait(agentID string) sim.ToolCallReply {
	return w.tc("wait", map[string]any{"agent_id": agentID})
}

// runShell has the model run one shell command, then answer; it returns
// the command's TOOL_CALL_END and its model-facing result.
func (w *world) runShell(command string) (agent.Event, llm.ToolResult) {
	w.t.Helper()
	c := w.shell(command)
	w.script(calls(c), sim.Text("ok"))
	w.submit("run " + command)
	return w.toolEnd(c.ID), w.result(c.ID)
}

// matrixCase is one scenario run for every provider.
type matrixCase struct {
	name string
	cfg  agent.Config
	opts []profiles.Option
	run  func(t *testing.T, w *world)
}

// runMatrix runs each case for each provider as <provider>/<case>, all in
// parallel.
func runMatrix(t *testing.T, cases []matrixCase) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.run(t, newWorld(t, p, c.cfg, c.opts...))
				})
			}
		})
	}
}

func contains(t *testing.T, what, s, sub string) {
	t.Helper()
	if !strings.Contains(s, sub) {
		if len(s) > 2000 {
			s = s[:1000] + " ... " + s[len(s)-1000:]
		}
		t.Fatalf("%s does not contain %q:\n%s", what, sub, s)
	}
}
