package scripted

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// scriptMarker starts the script embedded in a task prompt.
const scriptMarker = "\n#agentfleet-script "

// Step is what the simulated model answers at one turn of a session whose
// prompt carries a script (see Prompt). The turn is the number of assistant
// messages already in the conversation, so any worker, in any order, gives
// a session the same answers, and a resumed session continues its script.
type Step struct {
	// Text is the final answer when Calls is empty. "{{results}}" is
	// replaced by every tool result of the conversation, one per line;
	// "{{last_user}}" by the last user or steering message.
	Text string `json:"text,omitempty"`
	// Calls are tool calls to make (executed by the session's tools). In
	// their arguments "{{agent:N}}" becomes the N-th agent id returned by
	// spawn_agent so far (from 0).
	Calls []Call `json:"calls,omitempty"`
	// Gate holds the answer until the test opens it (Model.Open).
	Gate string `json:"gate,omitempty"`
	// Delay is waited before answering (a model's latency).
	Delay time.Duration `json:"delay,omitempty"`
	// Fail answers the first FailTimes requests of this step with the
	// failure instead (default once).
	Fail      *sim.Failure `json:"fail,omitempty"`
	FailTimes int          `json:"fail_times,omitempty"`
	// Finish is the provider's finish reason of a text answer (max_tokens:
	// cut by the output limit); "" means a normal end.
	Finish string `json:"finish,omitempty"`
	// Models answers, for a request naming one of its models, that
	// model's step instead: sessions of one prompt on different models
	// (the attempts of a best-of-N task) follow different scripts.
	Models map[string]Step `json:"models,omitempty"`
}

// Call is one tool call of a Step.
type Call struct {
	Name string `json:"name"`
	Args any    `json:"args"`
}

// Prompt returns a task prompt: a title the model ignores, then the script.
func Prompt(title string, steps ...Step) string {
	b, _ := json.Marshal(steps)
	return title + scriptMarker + string(b)
}

// Spawn is a call to spawn_agent whose child follows steps.
func Spawn(title string, steps ...Step) Call {
	return Call{Name: "spawn_agent", Args: map[string]any{"task": Prompt(title, steps...)}}
}

// Shell is a call to the anthropic profile's shell tool.
func Shell(command string) Call {
	return Call{Name: "shell", Args: map[string]any{"command": command}}
}

// Model is an http.Handler speaking the Anthropic Messages API that answers
// each request from the script in the conversation's first user message,
// through a fresh sim server per request. A prompt without a script is
// answered "done". Safe for concurrent use.
type Model struct {
	mu       sync.Mutex
	gates    map[string]*gate
	failed   map[string]int // script hash + step -> failures served
	requests map[string]int // script hash + step -> requests seen
	total    int
	// Latency, when set, is waited before every answer.
	latency time.Duration
	// countTokens reports each request's size (sim.CountTokens) as its
	// input tokens instead of 100.
	countTokens bool
}

type gate struct {
	arrived, open chan struct{}
	arrivedOnce   sync.Once
	openOnce      sync.Once
	count         int           // arrivals; guarded by Model.mu
	changed       chan struct{} // closed and replaced at each arrival; guarded by Model.mu
}

// New returns a model with no gate opened and nothing served.
func New() *Model {
	return &Model{gates: map[string]*gate{}, failed: map[string]int{}, requests: map[string]int{}}
}

// SetLatency makes every answer wait d first (the simulated model latency).
func (m *Model) SetLatency(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.latency = d
}

func (m *Model) gate(name string) *gate {
	m.mu.Lock()
	defer m.mu.Unlock()
	g, ok := m.gates[name]
	if !ok {
		g = &gate{arrived: make(chan struct{}), open: make(chan struct{}), changed: make(chan struct{})}
		m.gates[name] = g
	}
	return g
}

// Open releases every request held at the gate, now and later.
func (m *Model) Open(name string) {
	g := m.gate(name)
	g.openOnce.Do(func() { close(g.open) })
}

// SetCountTokens makes every answer report its request's size
// (sim.CountTokens) as input tokens, as a provider does, instead of 100:
// for sessions whose context accounting the test exercises.
func (m *Model) SetCountTokens(on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.countTokens = on
}

// Arrived is closed once a request reached the gate.
func (m *Model) Arrived(name string) <-chan struct{} { return m.gate(name).arrived }

// WaitArrivals waits until n requests have reached the gate (held or
// released) or ctx ends.
func (m *Model) WaitArrivals(ctx context.Context, name string, n int) error {
	g := m.gate(name)
	for {
		m.mu.Lock()
		count, ch := g.count, g.changed
		m.mu.Unlock()
		if count >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("scripted: %d of %d requests reached gate %q: %w", count, n, name, ctx.Err())
		}
	}
}

// Requests returns how many requests asked for step n of the script in
// prompt (more than one means the step was asked again: a retry or a
// restart).
func (m *Model) Requests(prompt string, step int) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.requests[stepKey(prompt, step)]
}

// Total is the number of requests served.
func (m *Model) Total() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total
}

// Repeats is the number of requests that asked for a step of a
// conversation already asked for before: a model request beyond one per
// round, made by a retry or by a session resumed after its worker died
// mid-request.
func (m *Model) Repeats() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, count := range m.requests {
		n += count - 1
	}
	return n
}

// ServeHTTP decides the reply from the conversation and lets a one-shot
// sim server render it in the request's wire format.
func (m *Model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	conv, err := parseAnthropic(body)
	if err != nil {
		http.Error(w, "scripted: "+err.Error(), http.StatusBadRequest)
		return
	}
	var rep sim.Reply
	if isSummaryRequest(body) {
		rep = summaryReply(conv.allUser)
	} else if rep, err = m.replyOrGone(r, conv); err != nil {
		return // the client went away at a gate
	}
	m.mu.Lock()
	count := m.countTokens
	m.mu.Unlock()
	if count {
		rep.Usage.InputTokens = sim.CountTokens(body)
	}
	one := sim.New()
	defer one.Close()
	one.Enqueue(rep)
	r.Body = io.NopCloser(bytes.NewReader(body))
	one.ServeHTTP(w, r)
}

// replyOrGone is reply, with an error when the client went away.
func (m *Model) replyOrGone(r *http.Request, c conversation) (sim.Reply, error) {
	rep, ok := m.reply(r.Context(), c)
	if !ok {
		return rep, r.Context().Err()
	}
	return rep, nil
}

// reply picks the step for the conversation's turn.
func (m *Model) reply(ctx context.Context, c conversation) (sim.Reply, bool) {
	steps := Steps(c.firstUser)
	turn := c.assistantTurns
	key := stepKey(c.firstUser, turn)
	m.mu.Lock()
	m.total++
	m.requests[key]++
	latency := m.latency
	m.mu.Unlock()
	if turn >= len(steps) {
		return sim.Reply{Text: "done", Usage: usage()}, true
	}
	st := steps[turn]
	if alt, ok := st.Models[c.model]; ok {
		st = alt
	}
	if st.Gate != "" {
		g := m.gate(st.Gate)
		g.arrivedOnce.Do(func() { close(g.arrived) })
		m.mu.Lock()
		g.count++
		close(g.changed)
		g.changed = make(chan struct{})
		m.mu.Unlock()
		select {
		case <-g.open:
		case <-ctx.Done():
			return sim.Reply{}, false
		}
	}
	if d := st.Delay + latency; d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return sim.Reply{}, false
		}
	}
	if st.Fail != nil && m.countFailure(key, st) {
		return sim.Reply{Failure: st.Fail}, true
	}
	return render(st, c), true
}

// countFailure reports whether this request of the step should fail.
func (m *Model) countFailure(key string, st Step) bool {
	times := st.FailTimes
	if times == 0 {
		times = 1
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failed[key] >= times {
		return false
	}
	m.failed[key]++
	return true
}

func render(st Step, c conversation) sim.Reply {
	if len(st.Calls) == 0 {
		text := strings.ReplaceAll(st.Text, "{{results}}", strings.Join(c.results, "\n"))
		text = strings.ReplaceAll(text, "{{last_user}}", c.lastUser)
		return sim.Reply{Text: text, Usage: usage(), FinishReason: st.Finish}
	}
	rep := sim.Reply{Usage: usage()}
	ids := c.agentIDs()
	for i, call := range st.Calls {
		args, _ := json.Marshal(call.Args)
		for j, id := range slices.Backward(ids) {
			args = bytes.ReplaceAll(args, []byte(fmt.Sprintf("{{agent:%d}}", j)), []byte(id))
		}
		rep.ToolCalls = append(rep.ToolCalls, sim.ToolCallReply{
			ID: fmt.Sprintf("toolu_%d_%d", c.assistantTurns, i), Name: call.Name, Arguments: string(args)})
	}
	return rep
}

func usage() llm.Usage { return llm.Usage{InputTokens: 100, OutputTokens: 20} }

func scriptOf(prompt string) string {
	_, script, ok := strings.Cut(prompt, scriptMarker)
	if !ok {
		return ""
	}
	return script
}

// stepKey names step n of a conversation by its whole first message, so
// two tasks with the same script and different titles are told apart.
func stepKey(prompt string, step int) string {
	h := sha256.Sum256([]byte(prompt))
	return fmt.Sprintf("%s/%d", hex.EncodeToString(h[:8]), step)
}

// conversation is what the model needs to know of a request.
type conversation struct {
	model          string // the request's model
	firstUser      string
	allUser        string // every user text, for a summary request
	lastUser       string
	assistantTurns int
	results        []string
}

// agentIDs lists the agent ids in tool results (spawn_agent's), in order,
// for the "{{agent:N}}" placeholders of a Step's call arguments.
func (c conversation) agentIDs() []string {
	var ids []string
	seen := map[string]bool{}
	for _, r := range c.results {
		var v struct {
			AgentID string `json:"agent_id"`
		}
		if json.Unmarshal([]byte(r), &v) == nil && v.AgentID != "" && !seen[v.AgentID] {
			seen[v.AgentID] = true
			ids = append(ids, v.AgentID)
		}
	}
	return ids
}

// parseAnthropic reads a Messages API request body.
func parseAnthropic(body []byte) (conversation, error) {
	msgs, err := sim.AnthropicMessages(body)
	if err != nil {
		return conversation{}, err
	}
	var c conversation
	var head struct {
		Model string `json:"model"`
	}
	if json.Unmarshal(body, &head) == nil {
		c.model = head.Model
	}
	for _, msg := range msgs {
		if msg.Role == "assistant" {
			c.assistantTurns++
			continue
		}
		for _, b := range msg.Blocks {
			switch b.Type {
			case "text":
				if c.firstUser == "" {
					c.firstUser = b.Text
				}
				c.lastUser = b.Text
				c.allUser += b.Text + "\n"
			case "tool_result":
				c.results = append(c.results, b.ResultText())
			}
		}
	}
	if !strings.Contains(c.firstUser, scriptMarker) {
		if p := promptIn(c.firstUser); p != "" { // a compacted conversation
			c.firstUser = p
		}
	}
	if t := turnFromIDs(msgs); t >= 0 {
		c.assistantTurns = t
	}
	return c, nil
}

// Steps returns the script a prompt made by Prompt carries: nil for a
// prompt without one, or one whose script is not valid JSON.
func Steps(prompt string) []Step {
	var steps []Step
	if script := scriptOf(prompt); script != "" {
		_ = json.Unmarshal([]byte(script), &steps)
	}
	return steps
}
