package bedrock_test

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/bedrock"
	"github.com/agentfleet/agentfleet/llm/bedrock/bedrocktest"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

const (
	testAccessKey = "AKIDEXAMPLE"
	testSecret    = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	testRegion    = "eu-central-1"
	testModel     = "anthropic.claude-sonnet-4-20250514-v1:0"
)

var signingTime = time.Date(2026, 3, 1, 12, 30, 0, 0, time.UTC)

// anthropicEvents is a short Messages API stream: "Hello world", end_turn.
var anthropicEvents = []string{
	`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4","content":[],"stop_reason":null,"usage":{"input_tokens":12,"output_tokens":1}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" world"}}`,
	`{"type":"content_block_stop","index":0}`,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`,
	`{"type":"message_stop","amazon-bedrock-invocationMetrics":{"inputTokenCount":12,"outputTokenCount":5}}`,
}

// chunkMessage frames one Messages API event as Bedrock does.
func chunkMessage(event string) []byte {
	payload, _ := json.Marshal(map[string]any{"bytes": base64.StdEncoding.EncodeToString([]byte(event)), "p": "abcdefgh"})
	return bedrocktest.EncodeMessage([][2]string{{":event-type", "chunk"}, {":content-type", "application/json"}, {":message-type", "event"}}, payload)
}

// fakeBedrock is a Bedrock runtime that checks each request's SigV4
// signature and body, then answers from its script.
type fakeBedrock struct {
	t       *testing.T
	mu      sync.Mutex
	paths   []string
	headers []http.Header
	bodies  []map[string]any
	raw     [][]byte
	bad     []string
	answer  func(w http.ResponseWriter, stream bool)
	// key, secret and region are what a request must be signed with;
	// empty means testAccessKey, testSecret and testRegion.
	key, secret, region string
}

func (f *fakeBedrock) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	f.mu.Lock()
	f.paths = append(f.paths, r.URL.EscapedPath())
	f.headers = append(f.headers, r.Header.Clone())
	f.bodies = append(f.bodies, m)
	f.raw = append(f.raw, body)
	key, secret, region := cmp.Or(f.key, testAccessKey), cmp.Or(f.secret, testSecret), cmp.Or(f.region, testRegion)
	if why := verifySigV4(r, body, key, secret, region, "bedrock"); why != "" {
		f.bad = append(f.bad, why)
	}
	f.mu.Unlock()
	f.answer(w, strings.HasSuffix(r.URL.Path, "/invoke-with-response-stream"))
}

func streamAnswer(messages ...[]byte) func(http.ResponseWriter, bool) {
	return func(w http.ResponseWriter, _ bool) {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		w.Header().Set("X-Amzn-Requestid", "req-123")
		for _, m := range messages {
			_, _ = w.Write(m)
		}
	}
}

func newClient(t *testing.T, f *fakeBedrock) *bedrock.Client {
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	retry, _ := llmtest.FastRetry(1)
	c, err := bedrock.New(bedrock.Config{Region: testRegion, BaseURL: srv.URL, Retry: retry,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: testAccessKey, SecretAccessKey: testSecret}, nil
		}),
		Now: func() time.Time { return signingTime }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func request() llm.Request {
	return llm.Request{Model: testModel, Messages: []llm.Message{llm.SystemMessage("be brief"), llm.UserMessage("hi")},
		Tools:           []llm.ToolDefinition{{Name: "shell", Description: "run", Parameters: json.RawMessage(`{"type":"object"}`)}},
		ProviderOptions: llm.ProviderOptions{"anthropic": {"beta_headers": []string{"context-1m-2025-08-07"}}}}
}

// A streamed call: the request is signed as SigV4 says (checked by an
// independent verifier for a fixed time and key), goes to the model's
// invoke-with-response-stream path with the model id escaped, carries the
// Messages body reshaped for Bedrock, and the event stream's chunks become
// the answer.
func TestStreamSignsAndDecodes(t *testing.T) {
	var msgs [][]byte
	for _, e := range anthropicEvents {
		msgs = append(msgs, chunkMessage(e))
	}
	f := &fakeBedrock{t: t, answer: streamAnswer(msgs...)}
	c := newClient(t, f)
	events, resp, err := llmtest.Collect(c.Stream(context.Background(), request()))
	if err != nil {
		t.Fatal(err)
	}
	if got := llmtest.Deltas(events, llm.EventTextDelta); got != "Hello world" {
		t.Errorf("text deltas %q", got)
	}
	if resp.Text() != "Hello world" || resp.FinishReason.Reason != llm.FinishStop || resp.Usage.InputTokens != 12 || resp.Usage.OutputTokens != 5 {
		t.Errorf("response %+v", resp)
	}
	if len(f.bad) > 0 {
		t.Fatalf("signature: %s", f.bad[0])
	}
	if want := "/model/anthropic.claude-sonnet-4-20250514-v1%3A0/invoke-with-response-stream"; f.paths[0] != want {
		t.Errorf("path %s, want %s", f.paths[0], want)
	}
	checkBody(t, f.bodies[0])
}

func checkBody(t *testing.T, b map[string]any) {
	t.Helper()
	if b["anthropic_version"] != bedrock.AnthropicVersion {
		t.Errorf("anthropic_version %v", b["anthropic_version"])
	}
	if _, ok := b["model"]; ok {
		t.Error("the body carries model (it belongs in the path)")
	}
	if _, ok := b["stream"]; ok {
		t.Error("the body carries stream")
	}
	if betas, _ := b["anthropic_beta"].([]any); len(betas) != 1 || betas[0] != "context-1m-2025-08-07" {
		t.Errorf("anthropic_beta %v", b["anthropic_beta"])
	}
	if b["system"] == nil || b["messages"] == nil || b["max_tokens"] == nil || b["tools"] == nil {
		t.Errorf("body lacks system, messages, max_tokens or tools: %v", b)
	}
}

// Complete calls InvokeModel and reads the Messages response.
func TestCompleteSignsAndParses(t *testing.T) {
	f := &fakeBedrock{t: t, answer: func(w http.ResponseWriter, _ bool) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"msg_2","type":"message","role":"assistant","model":"claude","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":3,"output_tokens":1}}`)
	}}
	c := newClient(t, f)
	resp, err := c.Complete(context.Background(), request())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "ok" || len(f.bad) > 0 || !strings.HasSuffix(f.paths[0], "%3A0/invoke") {
		t.Fatalf("response %q, signature problems %v, path %s", resp.Text(), f.bad, f.paths[0])
	}
	checkBody(t, f.bodies[0])
}

// Errors: an error response is classified by X-Amzn-ErrorType, and an
// exception message mid-stream ends the stream with its kind; a stream cut
// before message_stop is interrupted.
func TestErrors(t *testing.T) {
	f := &fakeBedrock{t: t, answer: func(w http.ResponseWriter, _ bool) {
		w.Header().Set("X-Amzn-Errortype", "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, `{"message":"Too many requests, please wait before trying again."}`)
	}}
	_, err := newClient(t, f).Complete(context.Background(), request())
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.ErrRateLimited || !strings.Contains(le.Message, "Too many requests") {
		t.Fatalf("error %v, want rate_limited", err)
	}
	exception := bedrocktest.EncodeMessage([][2]string{{":exception-type", "modelStreamErrorException"}, {":content-type", "application/json"},
		{":message-type", "exception"}}, []byte(`{"message":"the model stopped"}`))
	f = &fakeBedrock{t: t, answer: streamAnswer(chunkMessage(anthropicEvents[0]), exception)}
	_, _, err = llmtest.Collect(newClient(t, f).Stream(context.Background(), request()))
	if !errors.As(err, &le) || le.Kind != llm.ErrServer || le.Code != "modelStreamErrorException" {
		t.Fatalf("error %v, want a server error from the exception", err)
	}
	f = &fakeBedrock{t: t, answer: streamAnswer(chunkMessage(anthropicEvents[0]), chunkMessage(anthropicEvents[1]))}
	_, _, err = llmtest.Collect(newClient(t, f).Stream(context.Background(), request()))
	if !errors.As(err, &le) || le.Kind != llm.ErrStreamInterrupted {
		t.Fatalf("error %v, want stream_interrupted", err)
	}
}

// A response format goes out as a forced call of a tool with its schema,
// and the streamed tool_use comes back as the answer's text, validated.
func TestStructuredOutputAsForcedTool(t *testing.T) {
	events := []string{
		`{"type":"message_start","message":{"id":"msg_3","type":"message","role":"assistant","model":"claude","content":[],"stop_reason":null,"usage":{"input_tokens":9,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"answer","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"answer\":5,"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"\"unit\":\"apples\"}"}}`,
		`{"type":"content_block_stop","index":0}`,
		`{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":7}}`,
		`{"type":"message_stop"}`,
	}
	var msgs [][]byte
	for _, e := range events {
		msgs = append(msgs, chunkMessage(e))
	}
	f := &fakeBedrock{t: t, answer: streamAnswer(msgs...)}
	c := newClient(t, f)
	req := llm.Request{Model: testModel, Messages: []llm.Message{llm.UserMessage("2+3 apples?")}, ResponseFormat: llmtest.AnswerFormat()}
	got, resp, err := llmtest.Collect(c.Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	const answer = `{"answer":5,"unit":"apples"}`
	if resp.Text() != answer || len(resp.ToolCalls()) != 0 || resp.FinishReason.Reason != llm.FinishStop || llmtest.Deltas(got, llm.EventTextDelta) != answer {
		t.Errorf("text %q calls %v finish %+v deltas %q", resp.Text(), resp.ToolCalls(), resp.FinishReason, llmtest.Deltas(got, llm.EventTextDelta))
	}
	choice, _ := f.bodies[0]["tool_choice"].(map[string]any)
	tools, _ := f.bodies[0]["tools"].([]any)
	if choice["type"] != "tool" || choice["name"] != "answer" || len(tools) != 1 {
		t.Errorf("tool_choice %v tools %v, want a forced call of the answer tool", choice, tools)
	}
}
