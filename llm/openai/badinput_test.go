package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/llm/openai"
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
	return llm.Request{Model: "gpt-5", Messages: []llm.Message{llm.UserMessage("hi")}}
}

// sse renders (event, data) pairs as an SSE body.
func sse(pairs ...string) sim.Reply {
	var b strings.Builder
	for i := 0; i+1 < len(pairs); i += 2 {
		b.WriteString("event: " + pairs[i] + "\ndata: " + pairs[i+1] + "\n\n")
	}
	return sim.Reply{Raw: &sim.RawResponse{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: b.String()}}
}

const completed = `{"type":"response.completed","response":{"id":"resp_1","status":"completed","model":"gpt-5","output":[{"type":"message","id":"msg_1","content":[{"type":"output_text","text":"ok"}]}],"usage":{"input_tokens":3,"output_tokens":1}}}`

func TestStreamMalformedEventJSON(t *testing.T) {
	srv, c := setup(t)
	srv.Enqueue(sse("response.created", `{"type":"response.created","response":{"id":"resp_1"}}`,
		"response.output_text.delta", `{"type":"response.output_text.delta","delta":"he`))
	_, _, err := llmtest.Collect(c.Stream(context.Background(), request()))
	if llm.KindOf(err) != llm.ErrInvalidResponse || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("err = %v, want invalid response naming the bad JSON", err)
	}
}

func TestStreamUnknownEventIgnored(t *testing.T) {
	srv, c := setup(t)
	srv.Enqueue(sse("response.created", `{"type":"response.created","response":{"id":"resp_1"}}`,
		"response.teleport.delta", `{"type":"response.teleport.delta","whatever":[1,2,3]}`,
		"response.output_text.delta", `{"type":"response.output_text.delta","delta":"ok"}`,
		"response.completed", completed))
	events, resp, err := llmtest.Collect(c.Stream(context.Background(), request()))
	if err != nil || resp.Text() != "ok" || llmtest.Deltas(events, llm.EventTextDelta) != "ok" {
		t.Fatalf("got %v, %v; want the unknown event ignored", resp, err)
	}
}

func TestStreamEndsWithoutCompleted(t *testing.T) {
	srv, c := setup(t)
	srv.Enqueue(sse("response.output_text.delta", `{"type":"response.output_text.delta","delta":"partial"}`))
	_, _, err := llmtest.Collect(c.Stream(context.Background(), request()))
	if llm.KindOf(err) != llm.ErrStreamInterrupted {
		t.Fatalf("err = %v, want stream interrupted", err)
	}
}

func TestStreamFailedResponse(t *testing.T) {
	srv, c := setup(t)
	srv.Enqueue(sse("response.failed", `{"type":"response.failed","response":{"id":"r","status":"failed","error":{"code":"rate_limit_exceeded","message":"slow down"}}}`))
	_, _, err := llmtest.Collect(c.Stream(context.Background(), request()))
	if llm.KindOf(err) != llm.ErrRateLimited || !strings.Contains(err.Error(), "slow down") {
		t.Fatalf("err = %v, want rate limited with the provider's message", err)
	}
}

// TestStreamLineOver64KiB streams one delta far past bufio.Scanner's limit.
func TestStreamLineOver64KiB(t *testing.T) {
	srv, c := setup(t)
	text := strings.Repeat("abcdefgh", 20<<10) // 160 KiB in one event
	srv.Enqueue(sim.Reply{Text: text, ChunkSize: len(text)})
	_, resp, err := llmtest.Collect(c.Stream(context.Background(), request()))
	if err != nil || resp.Text() != text {
		t.Fatalf("err %v, got %d bytes of text, want %d", err, len(resp.Text()), len(text))
	}
}

func TestWholeResponseNotJSON(t *testing.T) {
	srv, c := setup(t)
	srv.Enqueue(sim.Reply{Raw: &sim.RawResponse{Body: `{"id": "resp_1", "output": [`, Header: http.Header{"X-Request-Id": {"req_42"}}}})
	_, err := c.Complete(context.Background(), request())
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrInvalidResponse || e.RequestID != "req_42" {
		t.Fatalf("err = %v, want invalid response with the request id", err)
	}
}

// TestClassifyError checks OpenAI's real error documents.
func TestClassifyError(t *testing.T) {
	tests := []struct {
		status int
		body   string
		want   llm.ErrorKind
		code   string
	}{
		{429, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}`, llm.ErrQuota, "insufficient_quota"},
		{429, `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, llm.ErrRateLimited, "rate_limit_exceeded"},
		{400, `{"error":{"message":"Your input exceeds the context window of this model.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`, llm.ErrContextLength, "context_length_exceeded"},
		{400, `{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","param":"messages","code":null}}`, llm.ErrContextLength, "invalid_request_error"},
		{401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`, llm.ErrAuthentication, "invalid_api_key"},
		{403, `{"error":{"message":"Country, region, or territory not supported","type":"request_forbidden","param":null,"code":"unsupported_country_region_territory"}}`, llm.ErrPermission, "unsupported_country_region_territory"},
		{404, `{"error":{"message":"The model does not exist","type":"invalid_request_error","param":null,"code":"model_not_found"}}`, llm.ErrInvalidRequest, "model_not_found"},
		{500, `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`, llm.ErrServer, "server_error"},
		{503, `{"error":{"message":"overloaded","type":"server_error","param":null,"code":null}}`, llm.ErrOverloaded, "server_error"},
		{502, `<html><body><h1>502 Bad Gateway</h1></body></html>`, llm.ErrServer, ""},
	}
	for _, tt := range tests {
		e := openai.ClassifyError(tt.status, nil, []byte(tt.body))
		if e.Kind != tt.want || e.Code != tt.code {
			t.Errorf("ClassifyError(%d, %s) = %s [%s], want %s [%s]", tt.status, tt.body, e.Kind, e.Code, tt.want, tt.code)
		}
	}
}

// TestReasoningRoundTrip checks that encrypted reasoning comes back on the
// next request when store is false, without the item id.
func TestReasoningRoundTrip(t *testing.T) {
	for _, store := range []bool{false, true} {
		srv, c := setup(t)
		srv.Enqueue(sim.Reply{Reasoning: "Need the weather tool.", ReasoningSignature: "enc-XYZ",
			ToolCalls: []sim.ToolCallReply{{ID: "call_1", Name: "weather", Arguments: `{"city":"Rome"}`}}}, sim.Text("Sunny."))
		req := request()
		req.ReasoningEffort = "high"
		req.ProviderOptions = llm.ProviderOptions{"openai": {"store": store}}
		first, err := c.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		req.Messages = append(req.Messages, first.Message, llm.ToolResultMessage(llm.ToolResult{ToolCallID: "call_1", Content: "20 C"}))
		if _, err := c.Complete(context.Background(), req); err != nil {
			t.Fatal(err)
		}
		var sent struct {
			Store   bool              `json:"store"`
			Include []string          `json:"include"`
			Input   []json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(srv.Requests()[1].Body, &sent); err != nil {
			t.Fatal(err)
		}
		if sent.Store != store || !store && (len(sent.Include) != 1 || sent.Include[0] != "reasoning.encrypted_content") {
			t.Fatalf("store %v include %v", sent.Store, sent.Include)
		}
		var reasoning map[string]any
		_ = json.Unmarshal(sent.Input[1], &reasoning)
		if reasoning["type"] != "reasoning" || reasoning["encrypted_content"] != "enc-XYZ" {
			t.Fatalf("second input item = %s, want the reasoning item echoed", sent.Input[1])
		}
		if _, hasID := reasoning["id"]; hasID != store {
			t.Fatalf("store=%v: reasoning item %s, id sent = %v", store, sent.Input[1], hasID)
		}
		if !strings.Contains(string(sent.Input[1]), "Need the weather tool.") {
			t.Fatalf("the summary is not echoed: %s", sent.Input[1])
		}
		if !strings.Contains(string(sent.Input[2]), `"function_call"`) || !strings.Contains(string(sent.Input[3]), `"function_call_output"`) {
			t.Fatalf("items 2 and 3 should be the call and its output: %s %s", sent.Input[2], sent.Input[3])
		}
	}
}

// TestForeignReasoningDropped: reasoning from another provider is not sent.
func TestForeignReasoningDropped(t *testing.T) {
	msg := llm.Message{Role: llm.RoleAssistant, Content: []llm.ContentPart{
		{Kind: llm.KindReasoning, Provider: "anthropic", Reasoning: &llm.Reasoning{Text: "x", Signature: "sig"}},
		{Kind: llm.KindText, Text: "hello"}}}
	body, err := openai.BuildRequest(llm.Request{Model: "gpt-5", Messages: []llm.Message{msg}}, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), "reasoning") || !strings.Contains(string(body), `"output_text"`) {
		t.Fatalf("body = %s", body)
	}
}

func TestBuildRequestOptions(t *testing.T) {
	temp := 0.2
	req := llm.Request{Model: "gpt-5", Temperature: &temp, MaxOutputTokens: 100,
		Messages: []llm.Message{llm.SystemMessage("sys"), {Role: llm.RoleUser, Content: []llm.ContentPart{
			{Kind: llm.KindText, Text: "look"}, {Kind: llm.KindImage, Image: &llm.Image{MediaType: "image/png", Data: []byte{1, 2}}}}}},
		Tools:      []llm.ToolDefinition{{Name: "shell", Parameters: json.RawMessage(`{"type":"object"}`)}},
		ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceNamed, Name: "shell"},
	}
	body, err := openai.BuildRequest(req, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"role":"developer","content":"sys"`, `"type":"input_image","image_url":"data:image/png;base64,AQI="`,
		`"tool_choice":{"name":"shell","type":"function"}`, `"temperature":0.2`, `"max_output_tokens":100`, `"stream":true`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("body %s lacks %s", body, want)
		}
	}
	bad := []llm.Request{{}, {Model: "gpt-5", ProviderOptions: llm.ProviderOptions{"openai": {"store": "yes"}}},
		{Model: "gpt-5", Messages: []llm.Message{{Role: "narrator"}}}}
	for _, r := range bad {
		if _, err := openai.BuildRequest(r, false); llm.KindOf(err) != llm.ErrInvalidRequest {
			t.Errorf("BuildRequest(%+v) = %v, want invalid request", r, err)
		}
	}
}
