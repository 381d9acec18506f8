package dev

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// SimPlan scripts the simulated model of dev mode: for each task whose
// prompt contains Match, the steps the model takes. The step of a request
// is the number of assistant turns already in its conversation, so any
// worker, in any order, and a resumed session give the same answers. A
// prompt that no entry matches follows Default. Tool calls run for real in
// the task's workspace; the plan must therefore be right about the files.
//
// The JSON form (examples/demo/plan.json):
//
//	{"pace": {"first_byte": "300ms", "chunk_size": 12, "chunk_delay": "15ms"},
//	 "tasks": [{"match": "TestAverage", "steps": [
//	     {"text": "Reading the code.", "calls": [{"name": "read_file", "args": {"file_path": "stats/stats.go"}}]},
//	     {"text": "Fixed."}]}],
//	 "default": [{"text": "..."}]}
//
// In the arguments of a call, "{{agent:N}}" stands for the id the N-th
// (from 0) spawn_agent call of the conversation returned, so a plan can
// wait for the subagents it spawned.
type SimPlan struct {
	Pace    SimPace   `json:"pace,omitzero"`
	Tasks   []SimTask `json:"tasks"`
	Default []SimStep `json:"default,omitempty"`
}

// SimPace makes the simulated answers arrive like a real model's: after
// FirstByte, streamed ChunkSize bytes at a time with ChunkDelay between
// chunks (zero: at once, in llm/sim's default chunks).
type SimPace struct {
	FirstByte  fleet.Duration `json:"first_byte,omitempty"`
	ChunkSize  int            `json:"chunk_size,omitempty"`
	ChunkDelay fleet.Duration `json:"chunk_delay,omitempty"`
}

// SimTask is the script of the tasks whose prompt contains Match.
type SimTask struct {
	Match string    `json:"match"`
	Steps []SimStep `json:"steps"`
}

// SimStep is one answer: Text, then the tool calls Calls (none: Text is
// the final answer and the session's input is done).
type SimStep struct {
	Text  string    `json:"text,omitempty"`
	Calls []SimCall `json:"calls,omitempty"`
	// Delay is waited before answering, on top of the pace (a slow step).
	Delay fleet.Duration `json:"delay,omitempty"`
}

// SimCall is one tool call of a step.
type SimCall struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

// defaultSimSteps answer a prompt the plan does not know: list the
// workspace, then say what this is.
var defaultSimSteps = []SimStep{
	{Text: "This is the simulated model. I have no script for this task, so I will only look around the workspace.",
		Calls: []SimCall{{Name: "shell", Args: json.RawMessage(`{"command":"ls -la","description":"List the workspace"}`)}}},
	{Text: "Simulated model: I listed the workspace and did nothing else, because no provider key is set. " +
		"Set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY (or AGENTFLEET_LLM_BASE_URL and AGENTFLEET_MODEL " +
		"for an OpenAI-compatible server such as Ollama) and restart `agentfleet-dev dev` to have a real model do the work."},
}

// LoadSimPlan reads a plan file and checks it.
func LoadSimPlan(path string) (SimPlan, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return SimPlan{}, fmt.Errorf("reading the simulated-model plan: %w", err)
	}
	var p SimPlan
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return SimPlan{}, fmt.Errorf("simulated-model plan %s: %v", path, err)
	}
	if err := p.Validate(); err != nil {
		return SimPlan{}, fmt.Errorf("simulated-model plan %s: %w", path, err)
	}
	return p, nil
}

// Validate names the first entry that is wrong.
func (p SimPlan) Validate() error {
	check := func(where string, steps []SimStep) error {
		if len(steps) == 0 {
			return fmt.Errorf("%s.steps is empty: give at least the final answer", where)
		}
		for i, st := range steps {
			for j, c := range st.Calls {
				if c.Name == "" {
					return fmt.Errorf("%s.steps[%d].calls[%d].name is required", where, i, j)
				}
				if len(c.Args) > 0 && !json.Valid(c.Args) {
					return fmt.Errorf("%s.steps[%d].calls[%d].args is not JSON", where, i, j)
				}
			}
		}
		if len(steps[len(steps)-1].Calls) > 0 {
			return fmt.Errorf("%s: the last step makes tool calls; end with a text answer", where)
		}
		return nil
	}
	for i, t := range p.Tasks {
		if strings.TrimSpace(t.Match) == "" {
			return fmt.Errorf("tasks[%d].match is required: a phrase of the task's prompt", i)
		}
		if err := check(fmt.Sprintf("tasks[%d]", i), t.Steps); err != nil {
			return err
		}
	}
	switch {
	case p.Pace.ChunkSize < 0:
		return fmt.Errorf("pace.chunk_size must be >= 0, got %d", p.Pace.ChunkSize)
	case p.Pace.FirstByte < 0 || p.Pace.ChunkDelay < 0:
		return fmt.Errorf("pace.first_byte and pace.chunk_delay must be >= 0")
	case len(p.Default) > 0:
		return check("default", p.Default)
	}
	return nil
}

// steps returns the script of a prompt.
func (p SimPlan) steps(prompt string) []SimStep {
	for _, t := range p.Tasks {
		if strings.Contains(prompt, t.Match) {
			return t.Steps
		}
	}
	if len(p.Default) > 0 {
		return p.Default
	}
	return defaultSimSteps
}

// simModel is the simulated provider of dev mode: an http.Handler that
// speaks the Anthropic Messages API, picks the answer from the plan and has
// a one-shot llm/sim server render it. Safe for concurrent use; it keeps no
// state between requests.
type simModel struct {
	plan    SimPlan
	closing <-chan struct{}
}

func (m *simModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	conv, err := parseSimConversation(body)
	if err != nil {
		http.Error(w, "simulated model: "+err.Error(), http.StatusBadRequest)
		return
	}
	rep, delay := m.reply(conv)
	if !m.wait(r.Context(), delay) {
		return
	}
	one := sim.New()
	defer one.Close()
	one.Enqueue(rep)
	r.Body = io.NopCloser(bytes.NewReader(body))
	one.ServeHTTP(w, r)
}

// wait sleeps d unless the request or the model ends first.
func (m *simModel) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-m.closing:
	}
	return false
}

// reply renders the step of the conversation's turn.
func (m *simModel) reply(c simConversation) (sim.Reply, time.Duration) {
	steps := m.plan.steps(c.firstUser)
	pace := m.plan.Pace
	rep := sim.Reply{ChunkSize: pace.ChunkSize, ChunkDelay: time.Duration(pace.ChunkDelay),
		Usage: llm.Usage{InputTokens: 200 + 40*c.assistantTurns, OutputTokens: 60}}
	if c.assistantTurns >= len(steps) {
		rep.Text = "Done."
		return rep, time.Duration(pace.FirstByte)
	}
	st := steps[c.assistantTurns]
	rep.Text = st.Text
	for i, call := range st.Calls {
		args := string(call.Args)
		if args == "" {
			args = "{}"
		}
		rep.ToolCalls = append(rep.ToolCalls, sim.ToolCallReply{
			ID:   fmt.Sprintf("toolu_sim_%d_%d", c.assistantTurns, i),
			Name: call.Name, Arguments: c.substitute(args)})
	}
	return rep, time.Duration(pace.FirstByte + st.Delay)
}

// agentRef is the placeholder of a spawned subagent's id in call arguments.
var agentRef = regexp.MustCompile(`\{\{agent:(\d+)\}\}`)

// substitute replaces {{agent:N}} with the N-th spawned agent id.
func (c simConversation) substitute(args string) string {
	return agentRef.ReplaceAllStringFunc(args, func(m string) string {
		n, _ := strconv.Atoi(agentRef.FindStringSubmatch(m)[1])
		if n < len(c.agents) {
			return c.agents[n]
		}
		return m // not spawned (yet): the tool reports the unknown id
	})
}

// simConversation is what the simulated model reads from a request.
type simConversation struct {
	firstUser      string
	assistantTurns int
	agents         []string // agent ids returned by spawn_agent, in order
}

// parseSimConversation reads an Anthropic Messages request body.
func parseSimConversation(body []byte) (simConversation, error) {
	msgs, err := sim.AnthropicMessages(body)
	if err != nil {
		return simConversation{}, err
	}
	var c simConversation
	spawnCalls := map[string]bool{} // tool_use ids of spawn_agent calls
	for _, msg := range msgs {
		for _, b := range msg.Blocks {
			switch {
			case msg.Role == "assistant" && b.Type == "tool_use" && b.Name == "spawn_agent":
				spawnCalls[b.ID] = true
			case msg.Role == "user" && b.Type == "text" && c.firstUser == "":
				c.firstUser = b.Text
			case msg.Role == "user" && b.Type == "tool_result" && spawnCalls[b.ToolUseID]:
				var st struct {
					AgentID string `json:"agent_id"`
				}
				if json.Unmarshal([]byte(b.ResultText()), &st) == nil && st.AgentID != "" {
					c.agents = append(c.agents, st.AgentID)
				}
			}
		}
		if msg.Role == "assistant" {
			c.assistantTurns++
		}
	}
	return c, nil
}
