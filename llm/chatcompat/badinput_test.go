package chatcompat_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/chatcompat"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/llm/sim"
)

func setup(t *testing.T) (*sim.Server, llm.Client) {
	t.Helper()
	srv := sim.NewServer()
	t.Cleanup(srv.Close)
	policy, _ := llmtest.FastRetry(1)
	return srv, newClient(t, srv.URL(), policy)
}

func request() llm.Request {
	return llm.Request{Model: "llama3", Messages: []llm.Message{llm.UserMessage("hi")}}
}

// chunks renders data-only SSE events.
func chunks(data ...string) sim.Reply {
	var b strings.Builder
	for _, d := range data {
		b.WriteString("data: " + d + "\n\n")
	}
	return sim.Reply{Raw: &sim.RawResponse{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: b.String()}}
}

func TestStreamMalformedChunkJSON(t *testing.T) {
	srv, c := setup(t)
	srv.Enqueue(chunks(`{"choices":[{"index":0,"delta":{"content":"he"}}]}`, `{"choices":[{"index":0,"delta":{"content":`))
	_, _, err := llmtest.Collect(c.Stream(context.Background(), request()))
	if llm.KindOf(err) != llm.ErrInvalidResponse || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("err = %v, want invalid response", err)
	}
}

func TestStreamUnknownFieldsAndEventsIgnored(t *testing.T) {
	srv, c := setup(t)
	rep := chunks(`{"choices":[{"index":0,"delta":{"role":"assistant","content":"o","audio":{"x":1}}}],"timings":{"a":1}}`,
		`{"choices":[{"index":0,"delta":{"content":"k"},"finish_reason":"stop"}]}`, "[DONE]")
	rep.Raw.Body = "event: ping\ndata: {\"kind\":\"keepalive\"}\n\n: comment\n\n" + rep.Raw.Body
	srv.Enqueue(rep)
	_, resp, err := llmtest.Collect(c.Stream(context.Background(), request()))
	if err != nil || resp.Text() != "ok" {
		t.Fatalf("got %v, %v", resp, err)
	}
}

func TestNoChoices(t *testing.T) {
	srv, c := setup(t)
	srv.Enqueue(sim.Reply{Raw: &sim.RawResponse{Body: `{"id":"chatcmpl-1","object":"chat.completion","choices":[]}`}})
	_, err := c.Complete(context.Background(), request())
	if llm.KindOf(err) != llm.ErrInvalidResponse || !strings.Contains(err.Error(), "no choices") {
		t.Fatalf("Complete err = %v, want invalid response about no choices", err)
	}
	srv.Enqueue(chunks(`{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":0}}`, "[DONE]"))
	_, _, err = llmtest.Collect(c.Stream(context.Background(), request()))
	if llm.KindOf(err) != llm.ErrInvalidResponse || !strings.Contains(err.Error(), "no choices") {
		t.Fatalf("Stream err = %v, want invalid response about no choices", err)
	}
}

func TestStreamLineOver64KiB(t *testing.T) {
	srv, c := setup(t)
	text := strings.Repeat("abcdefgh", 20<<10)
	srv.Enqueue(sim.Reply{Text: text, ChunkSize: len(text)})
	_, resp, err := llmtest.Collect(c.Stream(context.Background(), request()))
	if err != nil || resp.Text() != text {
		t.Fatalf("err %v, text of %d bytes, want %d", err, len(resp.Text()), len(text))
	}
}

// TestStreamToolCallsByIndex interleaves two calls' fragments by index and
// includes a server that omits the index (grouped by id).
func TestStreamToolCallsByIndex(t *testing.T) {
	srv, c := setup(t)
	srv.Enqueue(chunks(
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"add","arguments":"{\"a\":"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"mul","arguments":"{\"b\":"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"2}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, "[DONE]"))
	_, resp, err := llmtest.Collect(c.Stream(context.Background(), request()))
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.ToolCalls()
	if len(calls) != 2 || calls[0].ID != "a" || string(calls[0].Arguments) != `{"a":1}` || calls[1].Name != "mul" || string(calls[1].Arguments) != `{"b":2}` {
		t.Fatalf("calls = %+v", calls)
	}
	srv.Enqueue(chunks(
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"x","function":{"name":"f","arguments":"{}"}}]}}]}`,
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"y","function":{"name":"g","arguments":"{}"}}]},"finish_reason":"stop"}]}`))
	_, resp, err = llmtest.Collect(c.Stream(context.Background(), request()))
	if err != nil || len(resp.ToolCalls()) != 2 || resp.FinishReason.Reason != llm.FinishToolCalls {
		t.Fatalf("without indices: %+v, %v", resp, err)
	}
}

func TestStreamErrorChunk(t *testing.T) {
	srv, c := setup(t)
	srv.Enqueue(chunks(`{"choices":[{"index":0,"delta":{"content":"he"}}]}`,
		`{"error":{"message":"Provider returned error","code":429}}`))
	_, _, err := llmtest.Collect(c.Stream(context.Background(), request()))
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrRateLimited || !strings.Contains(e.Message, "Provider returned error") {
		t.Fatalf("err = %v", err)
	}
}

func TestReasoningEcho(t *testing.T) {
	for _, echo := range []bool{true, false} {
		srv, c := setup(t)
		srv.Enqueue(sim.Reply{Reasoning: "call the tool", ToolCalls: []sim.ToolCallReply{{ID: "c1", Name: "f", Arguments: "{}"}}}, sim.Text("done"))
		req := request()
		req.ProviderOptions = llm.ProviderOptions{"chatcompat": {"echo_reasoning": echo}}
		first, err := c.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		req.Messages = append(req.Messages, first.Message, llm.ToolResultMessage(llm.ToolResult{ToolCallID: "c1", Content: "ok"}))
		if _, err := c.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		var sent struct {
			Messages []map[string]any `json:"messages"`
		}
		_ = json.Unmarshal(srv.Requests()[1].Body, &sent)
		got, _ := sent.Messages[1]["reasoning_content"].(string)
		if echo && got != "call the tool" || !echo && got != "" {
			t.Fatalf("echo=%v: reasoning_content = %q", echo, got)
		}
	}
}

func TestBuildRequest(t *testing.T) {
	req := llm.Request{Model: "gpt-4o-mini", MaxOutputTokens: 50, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.ContentPart{
		{Kind: llm.KindText, Text: "see"}, {Kind: llm.KindImage, Image: &llm.Image{URL: "https://x/y.png"}}}}},
		Tools:      []llm.ToolDefinition{{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}},
		ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceNamed, Name: "f"}}
	body, err := chatcompat.BuildRequest(req, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"max_tokens":50`, `"image_url":{"url":"https://x/y.png"}`, `"tool_choice":{"function":{"name":"f"},"type":"function"}`, `"stream_options":{"include_usage":true}`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("body %s lacks %s", body, want)
		}
	}
	req.Model = "qwen3"
	body, _ = chatcompat.BuildRequest(req, false)
	if !strings.Contains(string(body), `"max_completion_tokens":50`) {
		t.Errorf("body %s should use max_completion_tokens", body)
	}
	req.ProviderOptions = llm.ProviderOptions{"chatcompat": {"max_tokens_field": "tokens"}}
	if _, err := chatcompat.BuildRequest(req, false); llm.KindOf(err) != llm.ErrInvalidRequest || !strings.Contains(err.Error(), "max_tokens_field") {
		t.Errorf("bad option: %v", err)
	}
}
