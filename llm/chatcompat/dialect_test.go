package chatcompat_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/internal/golden"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/chatcompat"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// dialectRequest uses every field a dialect changes: an output limit,
// reasoning effort, tools with auto choice, a response format, reasoning
// from an earlier turn, and parallel_tool_calls.
func dialectRequest() llm.Request {
	return llm.Request{Model: "some-model", MaxOutputTokens: 1024, ReasoningEffort: "high",
		Messages: []llm.Message{
			llm.SystemMessage("Be brief."), llm.UserMessage("2+3 apples?"),
			{Role: llm.RoleAssistant, Content: []llm.ContentPart{
				{Kind: llm.KindReasoning, Provider: chatcompat.ProviderName, Reasoning: &llm.Reasoning{Text: "Add them."}},
				{Kind: llm.KindToolCall, ToolCall: &llm.ToolCall{ID: "call_1", Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`)}}}},
			llm.ToolResultMessage(llm.ToolResult{ToolCallID: "call_1", Content: "5"}),
		},
		Tools:           []llm.ToolDefinition{{Name: "add", Description: "Add two numbers", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}}}`)}},
		ResponseFormat:  llmtest.AnswerFormat(),
		ProviderOptions: llm.ProviderOptions{"chatcompat": {"parallel_tool_calls": true}},
	}
}

// TestDialectBodiesGolden: the streamed body each dialect sends for
// dialectRequest, kept in testdata/dialect_<name>.golden.json.
func TestDialectBodiesGolden(t *testing.T) {
	for _, name := range chatcompat.DialectNames() {
		d, _ := chatcompat.LookupDialect(name)
		body, err := chatcompat.BuildDialectRequest(d, dialectRequest(), true)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		golden.Check(t, filepath.Join("testdata", "dialect_"+name+".golden.json"), llmtest.IndentJSON(body))
	}
}

// documented is what a host's documentation says about the request shape
// (see the sources in dialect.go): fields it must carry and fields it
// refuses.
var documented = map[string]struct{ want, refused []string }{
	"ollama":     {want: []string{"max_tokens", "stream_options", "reasoning_effort", "response_format.json_schema"}, refused: []string{"max_completion_tokens"}},
	"vllm":       {want: []string{"max_tokens", "stream_options", "parallel_tool_calls", "messages.reasoning_content"}},
	"llamacpp":   {want: []string{"max_tokens", "parallel_tool_calls"}, refused: []string{"reasoning_effort"}},
	"lmstudio":   {want: []string{"max_tokens", "response_format.json_schema"}},
	"openrouter": {want: []string{"max_tokens", "reasoning.effort", "parallel_tool_calls"}, refused: []string{"reasoning_effort"}},
	"groq":       {want: []string{"max_completion_tokens", "reasoning_effort"}, refused: []string{"max_tokens", "messages.reasoning_content"}},
	"together":   {want: []string{"max_tokens"}, refused: []string{"max_completion_tokens"}},
	"fireworks":  {want: []string{"max_tokens", "reasoning_effort"}},
	"deepseek":   {want: []string{"max_tokens", "stream_options", "response_format.json_object"}, refused: []string{"messages.reasoning_content", "response_format.json_schema"}},
	"mistral":    {want: []string{"max_tokens", "parallel_tool_calls"}, refused: []string{"stream_options", "max_completion_tokens", "messages.reasoning_content", "reasoning_effort"}},
	"xai":        {want: []string{"max_completion_tokens", "stream_options", "reasoning_effort"}},
	"cerebras":   {want: []string{"max_completion_tokens", "reasoning_effort"}, refused: []string{"parallel_tool_calls"}},
	"zai":        {want: []string{"max_tokens", "thinking", "response_format.json_object"}, refused: []string{"reasoning_effort", "response_format.json_schema"}},
	"zai-coding": {want: []string{"max_tokens", "thinking"}},
	"moonshot":   {want: []string{"max_tokens", "messages.reasoning_content", "response_format.json_object"}, refused: []string{"response_format.json_schema"}},
}

// has reports whether body carries a field: "a" at the top, "a.b" inside
// object a, "messages.x" on any message, "response_format.t" a format
// of type t.
func has(body map[string]any, field string) bool {
	top, sub, nested := strings.Cut(field, ".")
	v, ok := body[top]
	if !ok || !nested {
		return ok
	}
	switch top {
	case "messages":
		msgs, _ := v.([]any)
		for _, m := range msgs {
			if _, ok := m.(map[string]any)[sub]; ok {
				return true
			}
		}
		return false
	case "response_format":
		return v.(map[string]any)["type"] == sub
	}
	_, ok = v.(map[string]any)[sub]
	return ok
}

// hostServer is a real HTTP server on 127.0.0.1 standing in for a host: it
// checks each request against the host's documented shape and answers a
// streamed completion whose usage is in the last chunk.
type hostServer struct {
	t     *testing.T
	url   string
	mu    sync.Mutex
	paths []string
	heads []http.Header
	body  map[string]any
}

func startHost(t *testing.T) *hostServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &hostServer{t: t, url: "http://" + ln.Addr().String()}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return h
}

func (h *hostServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	h.mu.Lock()
	h.paths = append(h.paths, r.URL.Path)
	h.heads = append(h.heads, r.Header.Clone())
	h.body = body
	h.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	for _, chunk := range []string{
		`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":"{\"answer\":5,"}}]}`,
		`{"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"\"unit\":\"apples\"}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":40,"completion_tokens":9,"total_tokens":49}}`,
	} {
		fmt.Fprintf(w, "data: %s\n\n", chunk)
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

// TestDialectsAgainstDocumentedShape sends dialectRequest, streamed, to a
// loopback server at each dialect's documented base path and checks the
// path, the key and extra headers, the fields the host's documentation
// requires and refuses, and that the answer (usage in the last chunk) is
// read and validated.
func TestDialectsAgainstDocumentedShape(t *testing.T) {
	for _, name := range chatcompat.DialectNames()[1:] {
		t.Run(name, func(t *testing.T) {
			d, _ := chatcompat.LookupDialect(name)
			doc, ok := documented[name]
			if !ok {
				t.Fatalf("dialect %s has no documented request shape in this test", name)
			}
			h := startHost(t)
			base, err := url.Parse(d.BaseURL)
			if err != nil {
				t.Fatal(err)
			}
			retry, _ := llmtest.FastRetry(1)
			c, err := chatcompat.New(chatcompat.Config{Dialect: name, BaseURL: h.url + base.Path, APIKey: "sk-test", Retry: retry})
			if err != nil {
				t.Fatal(err)
			}
			_, resp, err := llmtest.Collect(c.Stream(context.Background(), dialectRequest()))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text() != `{"answer":5,"unit":"apples"}` || resp.Usage.InputTokens != 40 || resp.Usage.OutputTokens != 9 {
				t.Errorf("answer %q usage %+v", resp.Text(), resp.Usage)
			}
			if want := base.Path + "/chat/completions"; h.paths[0] != want {
				t.Errorf("path %s, want %s", h.paths[0], want)
			}
			if got := h.heads[0].Get("Authorization"); got != "Bearer sk-test" {
				t.Errorf("Authorization %q", got)
			}
			for k, v := range d.Header {
				if got := h.heads[0].Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			for _, f := range doc.want {
				if !has(h.body, f) {
					t.Errorf("the body lacks %s, which the host's documentation names: %v", f, h.body)
				}
			}
			for _, f := range doc.refused {
				if has(h.body, f) {
					t.Errorf("the body carries %s, which the host refuses", f)
				}
			}
		})
	}
}

// TestDialectSelection: by name, by the base URL's host, else generic; an
// unknown name is an error listing the known ones; overrides change single
// fields and are checked.
func TestDialectSelection(t *testing.T) {
	for _, c := range []struct{ name, base, want string }{
		{"", "https://api.groq.com/openai/v1", "groq"},
		{"", "https://openrouter.ai/api/v1", "openrouter"},
		{"", "https://API.Mistral.ai/v1", "mistral"},
		{"", "http://10.0.0.5:8000/v1", "generic"},
		{"zai-coding", "https://api.z.ai/api/coding/paas/v4", "zai-coding"},
		{"Ollama", "", "ollama"},
	} {
		d, err := chatcompat.DialectFor(c.name, c.base)
		if err != nil || d.Name != c.want {
			t.Errorf("DialectFor(%q, %q) = %s, %v; want %s", c.name, c.base, d.Name, err, c.want)
		}
	}
	if _, err := chatcompat.DialectFor("grok", ""); err == nil || !strings.Contains(err.Error(), "moonshot") {
		t.Errorf("unknown dialect: %v", err)
	}
	field := "max_completion_tokens"
	off := false
	d, _ := chatcompat.LookupDialect("mistral")
	d, err := chatcompat.Overrides{MaxTokensField: &field, ParallelToolCalls: &off, Header: map[string]string{"X-Extra": "1"}}.Apply(d)
	if err != nil || d.MaxTokensField != field || d.ParallelToolCalls || d.Header["X-Extra"] != "1" {
		t.Errorf("overridden: %+v, %v", d, err)
	}
	bad := "max_output"
	if _, err := (chatcompat.Overrides{MaxTokensField: &bad}).Apply(d); err == nil {
		t.Error("an unknown max_tokens_field was accepted")
	}
	tool := "tool"
	if _, err := (chatcompat.Overrides{ResponseFormat: &tool}).Apply(mustDialect("zai")); err == nil {
		t.Error("response_format tool was accepted for a host without forced tool choice")
	}
}

func mustDialect(name string) chatcompat.Dialect {
	d, _ := chatcompat.LookupDialect(name)
	return d
}

// A host without forced tool choice refuses one before sending; the
// dialect's base URL is used when none is configured.
func TestDialectRefusesForcedChoice(t *testing.T) {
	c, err := chatcompat.New(chatcompat.Config{Dialect: "moonshot"})
	if err != nil {
		t.Fatal(err)
	}
	req := dialectRequest()
	req.ResponseFormat = nil
	req.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceRequired}
	_, err = c.Complete(context.Background(), req)
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrInvalidRequest || !strings.Contains(e.Message, "moonshot") {
		t.Fatalf("err = %v, want invalid_request naming the dialect", err)
	}
}

// TestConformanceForcedToolAnswer runs the conformance suite with
// structured output sent as a forced tool call, the "tool" response
// format a dialect may choose.
func TestConformanceForcedToolAnswer(t *testing.T) {
	tool := "tool"
	llmtest.Exercise(t, llmtest.Target{Model: "qwen3:8b", NoReasoningSignature: true,
		New: func(t testing.TB, serverURL string, retry llm.RetryPolicy) llm.Client {
			c, err := chatcompat.New(chatcompat.Config{BaseURL: serverURL + "/v1", Retry: retry, Overrides: chatcompat.Overrides{ResponseFormat: &tool}})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}})
}
