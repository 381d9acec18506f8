package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
)

// step is one scripted model answer: a response, an error, or a function of
// the request.
type step struct {
	text  string
	calls []llm.ToolCall
	err   error
	usage llm.Usage
	// finish is the response's finish reason ("" means stop or tool calls).
	finish llm.FinishKind
	fn     func(req llm.Request) (*llm.Response, error)
}

// fakeClient is an in-process llm.Client answering from a script; when the
// script runs out it answers "done".
type fakeClient struct {
	mu       sync.Mutex
	script   []step
	requests []llm.Request
	latency  time.Duration
	notify   chan struct{}
}

func newFakeClient(steps ...step) *fakeClient {
	return &fakeClient{script: steps, notify: make(chan struct{}, 1000)}
}

func (f *fakeClient) Requests() []llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]llm.Request(nil), f.requests...)
}

func (f *fakeClient) next(ctx context.Context, req llm.Request) (*llm.Response, error) {
	f.mu.Lock()
	f.requests = append(f.requests, req)
	st := step{text: "done"}
	if len(f.script) > 0 {
		st, f.script = f.script[0], f.script[1:]
	}
	f.mu.Unlock()
	select {
	case f.notify <- struct{}{}:
	default:
	}
	if f.latency > 0 {
		select {
		case <-time.After(f.latency):
		case <-ctx.Done():
			return nil, &llm.Error{Kind: llm.ErrCanceled, Err: ctx.Err()}
		}
	}
	if st.fn != nil {
		return st.fn(req)
	}
	if st.err != nil {
		return nil, st.err
	}
	resp := response(st.text, st.usage, st.calls...)
	resp.FinishReason.Reason = st.finish
	return resp, nil
}

func response(text string, usage llm.Usage, calls ...llm.ToolCall) *llm.Response {
	msg := llm.Message{Role: llm.RoleAssistant}
	if text != "" {
		msg.Content = append(msg.Content, llm.ContentPart{Kind: llm.KindText, Text: text})
	}
	for i := range calls {
		msg.Content = append(msg.Content, llm.ContentPart{Kind: llm.KindToolCall, ToolCall: &calls[i]})
	}
	return &llm.Response{ID: "resp", Message: msg, Usage: usage}
}

func (f *fakeClient) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	return f.next(ctx, req)
}

func (f *fakeClient) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		resp, err := f.next(ctx, req)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		text := resp.Text()
		for len(text) > 0 {
			n := min(4, len(text))
			if !yield(llm.StreamEvent{Kind: llm.EventTextDelta, Delta: text[:n]}, nil) {
				return
			}
			text = text[n:]
		}
		yield(llm.StreamEvent{Kind: llm.EventFinish, Response: resp}, nil)
	}
}

func call(id, name string, args any) llm.ToolCall {
	b, _ := json.Marshal(args)
	return llm.ToolCall{ID: id, Name: name, Arguments: b}
}

// testProfile is a minimal Profile over an in-test registry.
type testProfile struct {
	reg      *tools.Registry
	parallel bool
	window   int
}

func (p *testProfile) ID() string                           { return "test" }
func (p *testProfile) Model() string                        { return "test-model" }
func (p *testProfile) Registry() *tools.Registry            { return p.reg }
func (p *testProfile) SupportsParallelToolCalls() bool      { return p.parallel }
func (p *testProfile) SupportsStreaming() bool              { return true }
func (p *testProfile) ContextWindow() int                   { return p.window }
func (p *testProfile) DefaultCommandTimeout() time.Duration { return 10 * time.Second }
func (p *testProfile) ProviderOptions(effort string) llm.ProviderOptions {
	return llm.ProviderOptions{"test": {"effort": effort}}
}
func (p *testProfile) BuildSystemPrompt(_ context.Context, env execenv.Environment, model, user string) (string, error) {
	return fmt.Sprintf("You are a test agent (%s) in %s. %s", model, env.WorkingDir(), user), nil
}

// dirEnv is a tiny execenv.Environment over a directory, enough for the
// in-test tools; methods the tests never use panic via the nil embed.
type dirEnv struct {
	execenv.Environment
	dir string
}

func (e dirEnv) WorkingDir() string { return e.dir }
func (e dirEnv) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.dir, p)
}
func (e dirEnv) ReadFile(_ context.Context, p string) ([]byte, error) { return os.ReadFile(e.path(p)) }
func (e dirEnv) WriteFile(_ context.Context, p string, b []byte) error {
	return os.WriteFile(e.path(p), b, 0o644)
}
func (e dirEnv) Stat(_ context.Context, p string) (execenv.FileInfo, error) {
	fi, err := os.Stat(e.path(p))
	if err != nil {
		return execenv.FileInfo{}, err
	}
	return execenv.FileInfo{Path: p, IsDir: fi.IsDir(), Size: fi.Size()}, nil
}
func (e dirEnv) Describe() execenv.Description {
	return execenv.Description{Kind: execenv.KindLocal, WorkingDir: e.dir}
}

var _ = fs.ErrNotExist

// echoTool returns its "text" argument; readTool reads a file; blockTool
// waits until its context ends or release is closed.
func echoTool(mutates bool) tools.Tool {
	return tools.Tool{
		Name: "echo", Description: "echo text", Mutates: mutates,
		Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Run: func(_ context.Context, c tools.Call) (tools.Output, error) {
			var a struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(c.Args, &a); err != nil {
				return tools.Output{}, err
			}
			return tools.Output{Text: a.Text}, nil
		},
	}
}

func failTool() tools.Tool {
	return tools.Tool{Name: "fail", Description: "always fails", Parameters: json.RawMessage(`{"type":"object"}`),
		Run: func(context.Context, tools.Call) (tools.Output, error) { return tools.Output{}, errors.New("boom") }}
}

// gateTool blocks until its context ends or gate is closed; started gets a
// value each time it begins.
func gateTool(name string, mutates bool, started chan<- string, gate <-chan struct{}) tools.Tool {
	return tools.Tool{Name: name, Description: "waits", Mutates: mutates, Parameters: json.RawMessage(`{"type":"object"}`),
		Run: func(ctx context.Context, c tools.Call) (tools.Output, error) {
			started <- c.ID
			select {
			case <-gate:
				return tools.Output{Text: name + " released"}, nil
			case <-ctx.Done():
				return tools.Output{}, ctx.Err()
			}
		}}
}

// bundle is one test session with its client and a subscription.
type bundle struct {
	s      *agent.Session
	client *fakeClient
	sub    *agent.Subscription
	dir    string
}

func setup(t *testing.T, cfg agent.Config, client *fakeClient, extra ...tools.Tool) *bundle {
	t.Helper()
	dir := t.TempDir()
	reg := tools.NewRegistry(append([]tools.Tool{echoTool(false), failTool()}, extra...)...)
	if cfg.Profile == nil {
		cfg.Profile = &testProfile{reg: reg, window: 1 << 20}
	}
	cfg.Client = client
	if cfg.Env == nil {
		cfg.Env = dirEnv{dir: dir}
	}
	s, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Abort)
	return &bundle{s: s, client: client, sub: s.Subscribe(), dir: dir}
}

func ctx30(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitEvent reads events until one of kind arrives, returning all read.
func (b *bundle) waitEvent(t *testing.T, kind agent.EventKind) []agent.Event {
	t.Helper()
	ctx := ctx30(t)
	var seen []agent.Event
	for {
		ev, ok := b.sub.Next(ctx)
		if !ok {
			t.Fatalf("event %s never came; saw %v", kind, kinds(seen))
		}
		seen = append(seen, ev)
		if ev.Kind == kind {
			return seen
		}
	}
}

func kinds(evs []agent.Event) []agent.EventKind {
	out := make([]agent.EventKind, len(evs))
	for i, e := range evs {
		out[i] = e.Kind
	}
	return out
}

func countKind(evs []agent.Event, k agent.EventKind) int {
	n := 0
	for _, e := range evs {
		if e.Kind == k {
			n++
		}
	}
	return n
}

func turnKinds(h []agent.Turn) []agent.TurnKind {
	out := make([]agent.TurnKind, len(h))
	for i, t := range h {
		out[i] = t.Kind
	}
	return out
}

// lastUserText returns the text of the request's last user message.
func lastUserText(req llm.Request) string {
	for _, v := range slices.Backward(req.Messages) {
		if v.Role == llm.RoleUser {
			return v.Text()
		}
	}
	return ""
}
