package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// TestErrorKinds answers every failure kind in Anthropic's own form and
// checks the classification, for Complete and for Stream.
func TestErrorKinds(t *testing.T) {
	cases := []struct {
		failure sim.Failure
		status  int
		code    string
	}{
		{sim.Failure{Kind: llm.ErrAuthentication}, 401, "authentication_error"},
		{sim.Failure{Kind: llm.ErrPermission}, 403, "permission_error"},
		{sim.Failure{Kind: llm.ErrQuota}, 400, "invalid_request_error"},
		{sim.Failure{Kind: llm.ErrRateLimited, RetryAfter: "7"}, 429, "rate_limit_error"},
		{sim.Failure{Kind: llm.ErrOverloaded}, 529, "overloaded_error"},
		{sim.Failure{Kind: llm.ErrContextLength}, 400, "invalid_request_error"},
		{sim.Failure{Kind: llm.ErrInvalidRequest}, 400, "invalid_request_error"},
		{sim.Failure{Kind: llm.ErrServer}, 500, "api_error"},
		{sim.Failure{Kind: llm.ErrServer, HTML: true}, 502, ""},
		{sim.Failure{Kind: llm.ErrTransport}, 0, ""},
		{sim.Failure{Kind: llm.ErrInvalidResponse}, 0, ""},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			name := string(tc.failure.Kind)
			if tc.failure.HTML {
				name += "/html"
			}
			if stream {
				name += "/stream"
			}
			t.Run(name, func(t *testing.T) {
				srv, c := setup(t)
				srv.Enqueue(sim.Reply{Failure: &tc.failure})
				var err error
				if stream {
					_, _, err = llmtest.Collect(c.Stream(testContext(t), basicRequest()))
				} else {
					_, err = c.Complete(testContext(t), basicRequest())
				}
				var e *llm.Error
				if !errors.As(err, &e) {
					t.Fatalf("got %v, want *llm.Error", err)
				}
				if e.Kind != tc.failure.Kind || e.Status != tc.status || e.Code != tc.code || e.Provider != "anthropic" {
					t.Errorf("got kind %s status %d code %q provider %q, want %s %d %q anthropic (%v)",
						e.Kind, e.Status, e.Code, e.Provider, tc.failure.Kind, tc.status, tc.code, e)
				}
				if tc.status >= 400 && !tc.failure.HTML && !strings.HasPrefix(e.RequestID, "req_") {
					t.Errorf("RequestID = %q, want the request-id header", e.RequestID)
				}
				if tc.failure.RetryAfter != "" && e.RetryAfter != 7*time.Second {
					t.Errorf("RetryAfter = %s, want 7s", e.RetryAfter)
				}
				if tc.failure.HTML && !strings.Contains(e.Message, "502 Bad Gateway") {
					t.Errorf("HTML page message = %q, want the page text", e.Message)
				}
			})
		}
	}
}

func TestStreamFailures(t *testing.T) {
	cases := map[string]struct {
		reply sim.Reply
		kind  llm.ErrorKind
		code  string
	}{
		"mid-stream overload": {sim.Reply{Text: "a long answer", ChunkSize: 2,
			MidStreamError: &sim.Failure{Kind: llm.ErrOverloaded}, ErrorAfterChunks: 4}, llm.ErrOverloaded, "overloaded_error"},
		"cut before message_stop": {sim.Reply{Text: "a long answer", ChunkSize: 2, CutAfterChunks: 5}, llm.ErrStreamInterrupted, ""},
		"headers then close":      {sim.Reply{Failure: &sim.Failure{Kind: llm.ErrStreamInterrupted}}, llm.ErrStreamInterrupted, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv, c := setup(t)
			srv.Enqueue(tc.reply)
			events, _, err := llmtest.Collect(c.Stream(testContext(t), basicRequest()))
			var e *llm.Error
			if !errors.As(err, &e) || e.Kind != tc.kind || e.Code != tc.code {
				t.Fatalf("got %v, want kind %s code %q", err, tc.kind, tc.code)
			}
			if tc.reply.Failure == nil && len(events) == 0 {
				t.Errorf("no events before the failure; the partial answer should have been delivered")
			}
		})
	}
}

func TestCanceledStream(t *testing.T) {
	srv, c := setup(t)
	srv.Enqueue(sim.Reply{Text: "never finishes", ChunkSize: 2, StallAfterChunks: 3})
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	var err error
	for ev, e := range c.Stream(ctx, basicRequest()) {
		if e != nil {
			err = e
			break
		}
		if ev.Kind == llm.EventTextStart {
			cancel() // the server has stalled after the ping; only cancel ends this
		}
	}
	// The cause tells our cancel apart from the test's 30 s deadline.
	if llm.KindOf(err) != llm.ErrCanceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want canceled by the caller", err)
	}
}

// rawStream serves body as a 200 event stream.
func rawStream(body string) sim.Reply {
	return sim.Reply{Raw: &sim.RawResponse{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: body}}
}

const (
	evStart = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"
	evStop  = "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":9}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
)

func textBlock(text string) string {
	data, _ := json.Marshal(text)
	return "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":" + string(data) + "}}\n\n" +
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
}

func TestBadInput(t *testing.T) {
	long := strings.Repeat("x", 100<<10) // one SSE line over 64 KiB
	cases := map[string]struct {
		reply   sim.Reply
		stream  bool
		kind    llm.ErrorKind // "" means success
		check   func(t *testing.T, r *llm.Response)
		message string
	}{
		"malformed JSON in an event": {reply: rawStream(evStart + "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\n\n" + evStop),
			stream: true, kind: llm.ErrInvalidResponse, message: "invalid JSON"},
		"unknown event type ignored": {reply: rawStream(evStart + "event: shiny_new_thing\ndata: {\"type\":\"shiny_new_thing\",\"x\":[1]}\n\n" + textBlock("hello") + evStop),
			stream: true, check: func(t *testing.T, r *llm.Response) {
				if r.Text() != "hello" || r.Usage.OutputTokens != 9 || r.Usage.InputTokens != 5 {
					t.Errorf("text %q usage %+v", r.Text(), r.Usage)
				}
			}},
		"unknown block type ignored": {reply: rawStream(evStart +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"mystery_block\",\"id\":\"s\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" + evStop),
			stream: true, check: func(t *testing.T, r *llm.Response) {
				if len(r.Message.Content) != 0 {
					t.Errorf("content = %+v, want none", r.Message.Content)
				}
			}},
		"tool arguments not JSON": {reply: sim.Reply{ToolCalls: []sim.ToolCallReply{{ID: "toolu_9", Name: "shell", Arguments: `{"cmd": "ls`}}},
			stream: true, check: func(t *testing.T, r *llm.Response) {
				calls := r.ToolCalls()
				if len(calls) != 1 || calls[0].ArgumentsError == "" || string(calls[0].Arguments) != `{"cmd": "ls` {
					t.Errorf("calls = %+v, want the raw arguments kept with ArgumentsError", calls)
				}
			}},
		"tool input not an object (whole)": {reply: sim.Reply{ToolCalls: []sim.ToolCallReply{{ID: "toolu_9", Name: "shell", Arguments: `not json`}}},
			check: func(t *testing.T, r *llm.Response) {
				if calls := r.ToolCalls(); len(calls) != 1 || calls[0].ArgumentsError == "" {
					t.Errorf("calls = %+v, want ArgumentsError", calls)
				}
			}},
		"HTML 502 page": {reply: sim.Reply{Failure: &sim.Failure{HTML: true}}, kind: llm.ErrServer, message: "Bad Gateway"},
		"SSE line over 64 KiB": {reply: rawStream(evStart + textBlock(long) + evStop), stream: true,
			check: func(t *testing.T, r *llm.Response) {
				if r.Text() != long {
					t.Errorf("text has %d bytes, want %d", len(r.Text()), len(long))
				}
			}},
		"body not JSON": {reply: sim.Reply{Raw: &sim.RawResponse{Body: "<html>hello</html>"}}, kind: llm.ErrInvalidResponse},
		"delta before start": {reply: rawStream(evStart + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n" + evStop),
			stream: true, kind: llm.ErrInvalidResponse, message: "before its content_block_start"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv, c := setup(t)
			srv.Enqueue(tc.reply)
			var resp *llm.Response
			var err error
			if tc.stream {
				_, resp, err = llmtest.Collect(c.Stream(testContext(t), basicRequest()))
			} else {
				resp, err = c.Complete(testContext(t), basicRequest())
			}
			if tc.kind == "" {
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, resp)
				return
			}
			if llm.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.message) {
				t.Fatalf("got %v, want kind %s mentioning %q", err, tc.kind, tc.message)
			}
		})
	}
}
