package worker_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/fleettest"
	"github.com/agentfleet/agentfleet/fleet/worker"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/profiles"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/store"
)

// recorded is one model request as the provider saw it.
type recorded struct {
	header http.Header
	body   string
}

// recorder is a proxy in front of the scripted model that keeps every
// request, so a test can see what reached the provider.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
	next http.Handler
}

func newRecorder(t *testing.T, target string) (*recorder, string) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{next: httputil.NewSingleHostReverseProxy(u)}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	return rec, srv.URL
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, recorded{header: r.Header.Clone(), body: string(body)})
	rec.mu.Unlock()
	r.Body = io.NopCloser(bytes.NewReader(body))
	rec.next.ServeHTTP(w, r)
}

// first returns the first request whose body contains marker.
func (rec *recorder) first(t *testing.T, marker string) recorded {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, r := range rec.reqs {
		if strings.Contains(r.body, marker) {
			return r
		}
	}
	t.Fatalf("no model request mentions %q", marker)
	return recorded{}
}

// settingsFleet is one worker on SQLite whose model requests are recorded
// and whose policy allows web_fetch.
func settingsFleet(t *testing.T) (*fleettest.Fleet, *recorder, *chatServer, *sim.Server) {
	f := fleettest.Start(t, fleettest.Options{SQLite: true, NoWorkers: true, Slots: 4})
	rec, proxy := newRecorder(t, f.Model.URL())
	chat := &chatServer{}
	chatSrv := httptest.NewServer(chat)
	t.Cleanup(chatSrv.Close)
	gem := sim.NewServer()
	t.Cleanup(gem.Close)
	cfg := f.WorkerConfig(0)
	pc := cfg.Providers["anthropic"]
	pc.BaseURL = proxy
	cfg.Providers = map[string]worker.ProviderConfig{"anthropic": pc,
		"openai": {Provider: "chatcompat", BaseURL: chatSrv.URL + "/v1", APIKey: "test-key", DefaultModel: "gpt-oss-test"},
		"gemini": {APIKey: "test-key", BaseURL: gem.URL(), DefaultModel: "gemini-test"}}
	cfg.Policy = fleet.Policy{WebFetch: true, WebFetchHosts: []string{"example.org"}}
	// env_policy filters the worker's environment, which a sandboxed
	// command never gets (it has the sandbox's HOME whatever the policy):
	// these shells run unconfined to see the policy act.
	cfg.Sandbox = worker.SandboxOff
	f.StartWorkerWith(cfg)
	return f, rec, chat, gem
}

// chatServer is an OpenAI-compatible server whose model reasons, calls a
// tool once, then answers; it keeps the request bodies.
type chatServer struct {
	mu     sync.Mutex
	bodies []string
}

func (c *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.bodies = append(c.bodies, string(body))
	c.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	chunks := []string{`{"choices":[{"index":0,"delta":{"content":"done"},"finish_reason":"stop"}]}`}
	if !strings.Contains(string(body), `"role":"tool"`) {
		chunks = []string{
			`{"choices":[{"index":0,"delta":{"reasoning_content":"thinking-4c1d"}}]}`,
			`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"shell","arguments":"{\"command\":\"echo hi\"}"}}]}}]}`,
			`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		}
	}
	for _, ch := range chunks {
		fmt.Fprintf(w, "data: %s\n\n", ch)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// second returns the body of the request that followed the tool call of
// the conversation whose prompt contains marker.
func (c *chatServer) second(t *testing.T, marker string) string {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.bodies {
		if strings.Contains(b, marker) && strings.Contains(b, `"role":"tool"`) {
			return b
		}
	}
	t.Fatalf("no second request for %q", marker)
	return ""
}

// runTask submits a task with the given session settings and returns its
// final text.
func runTask(t *testing.T, f *fleettest.Fleet, s fleet.Session, steps ...fleettest.Step) (uuid.UUID, string) {
	t.Helper()
	spec := fleettest.Spec(t.Name(), steps...)
	spec.Session = s
	id := f.Submit(spec)
	res := succeeded(t, f.WaitDone(id))
	return id, res.FinalText
}

func shells(n int, command string) []fleettest.Call {
	calls := make([]fleettest.Call, n)
	for i := range calls {
		calls[i] = fleettest.Shell(command)
	}
	return calls
}

// Each session setting of a task spec reaches the session: every subtest
// checks one setting against what the session did or sent, and would fail
// if the worker dropped it.
func TestSessionSettingsReachTheSession(t *testing.T) {
	t.Parallel()
	f, rec, chat, gem := settingsFleet(t)
	done := fleettest.Step{Text: "results: {{results}}"}

	t.Run("gemini 30s command", func(t *testing.T) {
		testenv.SkipIfShort(t, "runs a 30 s command")
		t.Parallel()
		// The Gemini shell's default is 10 s; the task raises it.
		gem.Enqueue(sim.ToolCall("c1", "shell", `{"command":"sleep 30; echo finished-30s"}`), sim.Text("done"))
		spec := fleet.TaskSpec{Prompt: "a long build", Profile: "gemini", Session: fleet.Session{CommandTimeout: fleet.Duration(45 * time.Second)}}
		succeeded(t, f.WaitDone(f.Submit(spec)))
		reqs := gem.Requests()
		if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "finished-30s") || strings.Contains(string(reqs[1].Body), "timed out") {
			t.Fatalf("the 30 s command did not finish within the task's 45 s timeout: %d requests, last %s", len(reqs), reqs[len(reqs)-1].Body)
		}
	})
	t.Run("command_timeout", func(t *testing.T) {
		_, text := runTask(t, f, fleet.Session{CommandTimeout: fleet.Duration(time.Second)},
			fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("sleep 20; echo finished")}}, done)
		if !strings.Contains(text, "timed out") || strings.Contains(text, "finished") {
			t.Fatalf("the 1s command timeout did not apply (the profile's is 120s): %s", text)
		}
	})
	t.Run("configure command_timeout", func(t *testing.T) {
		id := runningAtGate(t, f, "configure-timeout",
			fleettest.Step{Gate: "configure-timeout", Calls: []fleettest.Call{fleettest.Shell("sleep 20; echo finished")}}, done)
		reply, err := f.Queue.Control(waitCtx(t), fleet.DefaultTenant, id.String(), queue.ControlRequest{Op: queue.OpConfigure, CommandTimeout: time.Second})
		if err != nil || !reply.OK || reply.Status.CommandTimeoutMs != 1000 {
			t.Fatalf("configure: %+v, %v", reply, err)
		}
		reply, _ = f.Queue.Control(waitCtx(t), fleet.DefaultTenant, id.String(), queue.ControlRequest{Op: queue.OpConfigure, CommandTimeout: time.Hour})
		if reply.OK || !strings.Contains(reply.Error, "max_command_timeout") {
			t.Fatalf("a timeout above the session's maximum was accepted: %+v", reply)
		}
		f.Model.Open("configure-timeout")
		text := succeeded(t, f.WaitDone(id)).FinalText
		if !strings.Contains(text, "timed out") || strings.Contains(text, "finished") {
			t.Fatalf("the configured 1s timeout did not apply: %s", text)
		}
	})
	t.Run("max_command_timeout", func(t *testing.T) {
		_, text := runTask(t, f, fleet.Session{MaxCommandTimeout: fleet.Duration(time.Second)},
			fleettest.Step{Calls: []fleettest.Call{{Name: "shell", Args: map[string]any{"command": "sleep 20; echo finished", "timeout": 60000}}}}, done)
		if !strings.Contains(text, "timed out") || strings.Contains(text, "finished") {
			t.Fatalf("the 1s cap did not apply to the model's 60s timeout: %s", text)
		}
	})
	t.Run("tool_output_chars", func(t *testing.T) {
		_, text := runTask(t, f, fleet.Session{ToolOutputChars: map[string]int{"shell": 300}},
			fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("seq 1 200")}}, done)
		if strings.Contains(text, "\n100\n") || !strings.Contains(text, "\n199\n") {
			t.Fatalf("the shell output was not cut to 300 characters, head and tail (the default keeps 30000): %s", text)
		}
	})
	t.Run("tool_output_lines", func(t *testing.T) {
		_, text := runTask(t, f, fleet.Session{ToolOutputLines: map[string]int{"shell": 20}},
			fleettest.Step{Calls: []fleettest.Call{fleettest.Shell("seq 1 200")}}, done)
		if strings.Contains(text, "\n100\n") {
			t.Fatalf("the shell output was not cut to 20 lines (the default keeps 256): %s", text)
		}
	})
	t.Run("loop_detection_window", func(t *testing.T) {
		id, _ := runTask(t, f, fleet.Session{LoopDetectionWindow: 3},
			fleettest.Step{Calls: shells(3, "echo same")}, done)
		if !hasLoopWarning(t, f, id) {
			t.Fatal("three identical calls with a window of 3 gave no loop warning")
		}
	})
	t.Run("loop_detection", func(t *testing.T) {
		on, _ := runTask(t, f, fleet.Session{}, fleettest.Step{Calls: shells(10, "echo again")}, done)
		if !hasLoopWarning(t, f, on) {
			t.Fatal("ten identical calls gave no loop warning with loop detection on (the default)")
		}
		off, _ := runTask(t, f, fleet.Session{LoopDetection: new(false)}, fleettest.Step{Calls: shells(10, "echo again")}, done)
		if hasLoopWarning(t, f, off) {
			t.Fatal("loop_detection false still warned")
		}
	})
	t.Run("user_instructions", func(t *testing.T) {
		runTask(t, f, fleet.Session{UserInstructions: "Answer in haiku. marker-7f3a"}, done)
		r := rec.first(t, t.Name())
		if !strings.Contains(systemOf(t, r.body), "marker-7f3a") {
			t.Fatal("the system prompt lacks the user instructions")
		}
	})
	t.Run("env_policy", func(t *testing.T) {
		step := fleettest.Step{Calls: []fleettest.Call{fleettest.Shell(`echo "home=[$HOME]"`)}}
		_, text := runTask(t, f, fleet.Session{EnvPolicy: "none"}, step, done)
		if !strings.Contains(text, "home=[]") {
			t.Fatalf("env_policy none still passed HOME: %s", text)
		}
		_, text = runTask(t, f, fleet.Session{EnvPolicy: "core-only"}, step, done)
		if strings.Contains(text, "home=[]") {
			t.Fatalf("env_policy core-only dropped HOME: %s", text)
		}
	})
	t.Run("web_fetch", func(t *testing.T) {
		fetch := fleettest.Call{Name: "web_fetch", Args: map[string]any{"url": "https://elsewhere.test/x"}}
		_, text := runTask(t, f, fleet.Session{WebFetch: &fleet.WebFetch{Enabled: true, AllowedHosts: []string{"docs.example.org"}}},
			fleettest.Step{Calls: []fleettest.Call{fetch}}, done)
		if !strings.Contains(text, "not allowed") || !strings.Contains(text, "docs.example.org") {
			t.Fatalf("web_fetch was not offered with the task's hosts: %s", text)
		}
		if !hasTool(t, rec.first(t, t.Name()).body, "web_fetch") {
			t.Fatal("web_fetch is not among the tools sent to the model")
		}
	})
	t.Run("echo_reasoning", func(t *testing.T) {
		for _, echo := range []bool{true, false} {
			spec := fleet.TaskSpec{Prompt: fmt.Sprintf("%s echo=%v", t.Name(), echo), Profile: "openai",
				Session: fleet.Session{ProviderOptions: &fleet.ProviderOptions{EchoReasoning: new(echo),
					Headers: map[string]string{"X-Title": "chat-settings"}}}}
			succeeded(t, f.WaitDone(f.Submit(spec)))
			body := chat.second(t, spec.Prompt)
			if got := strings.Contains(body, "thinking-4c1d"); got != echo {
				t.Errorf("echo_reasoning %v: the reasoning was sent back = %v", echo, got)
			}
		}
	})
	t.Run("worker policy", func(t *testing.T) {
		spec := fleettest.Spec(t.Name(), done)
		spec.Session.WebFetch = &fleet.WebFetch{Enabled: true, AllowedHosts: []string{"example.com"}}
		task := f.WaitDone(f.Submit(spec))
		if task.State != store.TaskFailed || !strings.Contains(task.Error, fleet.ReasonNotAllowed) ||
			!strings.Contains(string(task.Result), "outside the operator's allowed hosts") {
			t.Fatalf("a host outside the worker's policy: state %s, error %q, result %s", task.State, task.Error, task.Result)
		}
	})
	t.Run("provider_options", func(t *testing.T) {
		runTask(t, f, fleet.Session{ProviderOptions: &fleet.ProviderOptions{
			Headers: map[string]string{"X-Title": "settings-test"}, AnthropicBeta: []string{"context-1m-2025-08-07"}}}, done)
		r := rec.first(t, t.Name())
		if r.header.Get("X-Title") != "settings-test" {
			t.Errorf("extra header X-Title = %q", r.header.Get("X-Title"))
		}
		if !strings.Contains(r.header.Get("Anthropic-Beta"), "context-1m-2025-08-07") {
			t.Errorf("anthropic-beta = %q", r.header.Get("Anthropic-Beta"))
		}
	})
}

func hasLoopWarning(t *testing.T, f *fleettest.Fleet, id uuid.UUID) bool {
	t.Helper()
	turns, err := f.Store.LoadTurns(waitCtx(t), store.LoadTurnsParams{SessionID: id})
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range turns {
		var turn agent.Turn
		if err := json.Unmarshal(tr.Payload, &turn); err != nil {
			t.Fatal(err)
		}
		if turn.Kind == agent.TurnSteering && strings.Contains(turn.Text, "Loop detected") {
			return true
		}
	}
	return false
}

// systemOf returns the system prompt of an Anthropic Messages request.
func systemOf(t *testing.T, body string) string {
	t.Helper()
	var req struct {
		System json.RawMessage `json:"system"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	return string(req.System)
}

func hasTool(t *testing.T, body, name string) bool {
	t.Helper()
	var req struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatal(err)
	}
	for _, tool := range req.Tools {
		if tool.Name == name {
			return true
		}
	}
	return false
}

// fleet.KnownToolNames (which the fleet package keeps without importing the
// profiles) is exactly the tools a session can have; fleet.EnvPolicies are
// execenv's policies.
func TestKnownToolNamesMatchTheProfiles(t *testing.T) {
	t.Parallel()
	names := map[string]bool{"web_fetch": true, "spawn_agent": true, "send_input": true, "wait": true, "close_agent": true}
	for _, p := range fleet.KnownProfiles {
		prof, err := profiles.ForProvider(p, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range prof.Registry().Names() {
			names[n] = true
		}
	}
	got := slices.Sorted(maps.Keys(names))
	if !slices.Equal(got, fleet.KnownToolNames) {
		t.Fatalf("fleet.KnownToolNames = %v, the sessions' tools are %v", fleet.KnownToolNames, got)
	}
	want := []string{string(execenv.EnvInheritAll), string(execenv.EnvCoreOnly), string(execenv.EnvNone)}
	if !slices.Equal(fleet.EnvPolicies, want) {
		t.Fatalf("fleet.EnvPolicies = %v, execenv has %v", fleet.EnvPolicies, want)
	}
}
