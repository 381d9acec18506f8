package smokelive

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/pricing"
	"github.com/agentfleet/agentfleet/llm/provider"
	"github.com/agentfleet/agentfleet/profiles"
)

// This file is the smoke run's checks, built without the smokelive tag so
// that sim_test.go can run them against the simulated provider in CI; only
// smoke_test.go, which points them at real providers, needs the tag.

// target is one real provider to run against.
type target struct {
	name    string // subtest name
	profile string // openai, anthropic or gemini
	model   string
	cfg     provider.Config
	skip    string // why it is skipped; "" runs it
	// local: an OpenAI-compatible host that may not report cache reads or
	// have a price.
	local bool
}

// newRun prepares the checks of one provider's client.
func newRun(t *testing.T, tg target, c llm.Client) *run {
	book, err := pricing.NewBook(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &run{t: t, tg: tg, c: c, book: book}
}

// callChecks runs the model-call checks as subtests, in order (the cost
// check counts the calls before it).
func (r *run) callChecks(t *testing.T) {
	t.Run("streamed_answer", r.streamedAnswer)
	t.Run("tool_round", r.toolRound)
	t.Run("cached_second_request", r.cachedSecondRequest)
	t.Run("structured_output", r.structuredOutput)
	t.Run("cost_recorded", r.costRecorded)
}

type run struct {
	t     *testing.T
	tg    target
	c     llm.Client
	book  *pricing.Book
	usage []llm.Usage // every call's usage, for the cost check
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return c
}

func (r *run) request(msgs ...llm.Message) llm.Request {
	return llm.Request{Model: r.tg.model, Messages: msgs, MaxOutputTokens: 2048, CacheKey: "agentfleet-smoke-live"}
}

func (r *run) complete(t *testing.T, req llm.Request) *llm.Response {
	t.Helper()
	resp, err := r.c.Complete(ctx(t), req)
	if err != nil {
		t.Fatalf("%s: %v", r.tg.name, err)
	}
	r.usage = append(r.usage, resp.Usage)
	return resp
}

func (r *run) streamedAnswer(t *testing.T) {
	req := r.request(llm.UserMessage("Reply with the single word: pong"))
	var text strings.Builder
	var final *llm.Response
	for ev, err := range r.c.Stream(ctx(t), req) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch ev.Kind {
		case llm.EventTextDelta:
			text.WriteString(ev.Delta)
		case llm.EventFinish:
			final = ev.Response
		}
	}
	if final == nil {
		t.Fatal("the stream ended without EventFinish")
	}
	r.usage = append(r.usage, final.Usage)
	if !strings.Contains(strings.ToLower(text.String()), "pong") || final.Text() != text.String() {
		t.Fatalf("streamed %q, final %q", text.String(), final.Text())
	}
}

var addTool = llm.ToolDefinition{Name: "add", Description: "Add two integers and return the sum.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`)}

func (r *run) toolRound(t *testing.T) {
	user := llm.UserMessage("Use the add tool to add 1234 and 4321, then tell me the sum.")
	req := r.request(user)
	req.Tools = []llm.ToolDefinition{addTool}
	req.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceRequired}
	first := r.complete(t, req)
	calls := first.ToolCalls()
	if len(calls) == 0 || calls[0].Name != "add" {
		t.Fatalf("no call of add: %+v", first.Message)
	}
	var args struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	if err := json.Unmarshal(calls[0].Arguments, &args); err != nil || args.A+args.B != 5555 {
		t.Fatalf("arguments %s (%v)", calls[0].Arguments, err)
	}
	var results []llm.ToolResult
	for _, c := range calls {
		results = append(results, llm.ToolResult{ToolCallID: c.ID, Name: c.Name, Content: "5555"})
	}
	req = r.request(user, first.Message, llm.ToolResultMessage(results...))
	req.Tools = []llm.ToolDefinition{addTool}
	second := r.complete(t, req)
	if !strings.Contains(strings.ReplaceAll(second.Text(), ",", ""), "5555") {
		t.Fatalf("the answer after the tool round does not use its result: %q", second.Text())
	}
}

// longPrefix is a system prompt past every provider's minimum cacheable
// length (Anthropic's 1,024 to 4,096 tokens, OpenAI's 1,024, Gemini's
// implicit cache's 1,024 to 4,096).
func longPrefix() string {
	var b strings.Builder
	b.WriteString("You are a terse assistant. Reference material follows; answer only what is asked.\n")
	for i := range 700 {
		fmt.Fprintf(&b, "Fact %d: the checksum of block %d is %x.\n", i, i, i*7919)
	}
	return b.String()
}

func (r *run) cachedSecondRequest(t *testing.T) {
	prefix := llm.SystemMessage(longPrefix())
	req := r.request(prefix, llm.UserMessage("What is the checksum of block 12? Reply with the hex only."))
	r.complete(t, req)
	var got llm.Usage
	for attempt := range 3 {
		got = r.complete(t, req).Usage
		if got.CacheReadTokens > 0 {
			t.Logf("attempt %d: %d of %d input tokens read from the cache", attempt+1, got.CacheReadTokens, got.InputTokens)
			return
		}
	}
	if r.tg.local {
		t.Skipf("the host reported no cache-read tokens (usage %+v): many local servers do not", got)
	}
	t.Fatalf("three repeats of a %d-token prefix read nothing from the cache: usage %+v", got.InputTokens, got)
}

func (r *run) structuredOutput(t *testing.T) {
	req := r.request(llm.UserMessage("Give the capital of France and its country code."))
	req.ResponseFormat = &llm.ResponseFormat{Name: "capital", Strict: true,
		Schema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"country_code":{"type":"string"}},"required":["city","country_code"],"additionalProperties":false}`)}
	resp := r.complete(t, req)
	var answer struct {
		City        string `json:"city"`
		CountryCode string `json:"country_code"`
	}
	if err := json.Unmarshal([]byte(resp.Text()), &answer); err != nil {
		t.Fatalf("the answer is not the schema's JSON: %q (%v)", resp.Text(), err)
	}
	if !strings.EqualFold(answer.City, "Paris") || !strings.EqualFold(answer.CountryCode, "FR") {
		t.Fatalf("answer %+v", answer)
	}
}

func (r *run) costRecorded(t *testing.T) {
	if !r.book.Known(r.tg.model) {
		if r.tg.local {
			t.Skipf("model %s has no price (a local model): set prices.<model> to record its cost", r.tg.model)
		}
		t.Fatalf("model %s has no price in llm/pricing: its sessions would cost a silent $0", r.tg.model)
	}
	price := r.book.PriceOf(r.tg.model, pricing.Price{})
	total := 0.0
	for i, u := range r.usage {
		c := price.Cost(u)
		if u.InputTokens+u.OutputTokens > 0 && c <= 0 {
			t.Errorf("call %d: usage %+v cost %v", i, u, c)
		}
		total += c
	}
	if total <= 0 {
		t.Fatalf("no cost recorded over %d calls", len(r.usage))
	}
	t.Logf("%d calls cost $%.5f at %+v", len(r.usage), total, price)
}

// sessionSteps is the seed's end-to-end run (9.13): a session of the
// provider's profile in a local environment.
func (r *run) sessionSteps(t *testing.T) {
	dir := t.TempDir()
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Cleanup(context.Background()) })
	profile, err := profiles.ForProvider(r.tg.profile, r.tg.model)
	if err != nil {
		t.Fatal(err)
	}
	s, err := agent.New(agent.Config{Client: r.c, Profile: profile, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Abort)
	sub := s.Subscribe()
	submit := func(input string) []agent.Event {
		t.Helper()
		out, err := s.Submit(ctx(t), input)
		if err != nil {
			t.Fatalf("%q: %v", input, err)
		}
		r.usage = append(r.usage, out.Usage)
		return drain(t, sub)
	}
	read := func(name string) string {
		b, _ := os.ReadFile(dir + "/" + name)
		return string(b)
	}
	submit("Create a file called hello.py that prints 'Hello World'")
	if !strings.Contains(read("hello.py"), "Hello") {
		t.Fatalf("step 1: hello.py is %q", read("hello.py"))
	}
	submit("Read hello.py and add a second print statement that says 'Goodbye'")
	if c := read("hello.py"); !strings.Contains(c, "Hello") || !strings.Contains(c, "Goodbye") {
		t.Fatalf("step 2: hello.py is %q", c)
	}
	evs := submit("Run hello.py and show the output")
	if !anyToolEnd(evs, func(ev agent.Event) bool { return strings.Contains(ev.Output, "Goodbye") }) {
		t.Fatalf("step 3: no tool call printed the script's output")
	}
	if err := os.WriteFile(dir+"/big.txt", []byte(strings.Repeat("x", 100000)), 0o600); err != nil {
		t.Fatal(err)
	}
	evs = submit("Read big.txt")
	if !anyToolEnd(evs, func(ev agent.Event) bool { return strings.Count(ev.Output, "x") >= 100000 }) {
		t.Fatalf("step 4: no TOOL_CALL_END carries the whole 100,000 characters")
	}
}

// drain returns the events of one input, up to its INPUT_DONE (within a
// minute of Submit returning).
func drain(t *testing.T, sub *agent.Subscription) []agent.Event {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []agent.Event
	for {
		ev, ok := sub.Next(c)
		if !ok {
			t.Fatalf("no INPUT_DONE event after the input finished (%d events seen)", len(out))
		}
		out = append(out, ev)
		if ev.Kind == agent.EventInputDone {
			return out
		}
	}
}

func anyToolEnd(evs []agent.Event, ok func(agent.Event) bool) bool {
	for _, ev := range evs {
		if ev.Kind == agent.EventToolCallEnd && ok(ev) {
			return true
		}
	}
	return false
}
