package gemini_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// TestErrorKinds answers every failure kind in Gemini's own form and checks
// the classification, for Complete and for Stream.
func TestErrorKinds(t *testing.T) {
	cases := []struct {
		failure sim.Failure
		status  int
		code    string
		retry   time.Duration
	}{
		{sim.Failure{Kind: llm.ErrAuthentication}, 400, "API_KEY_INVALID", 0},
		{sim.Failure{Kind: llm.ErrPermission}, 403, "PERMISSION_DENIED", 0},
		{sim.Failure{Kind: llm.ErrQuota}, 429, "RESOURCE_EXHAUSTED", 0},
		{sim.Failure{Kind: llm.ErrRateLimited, RetryAfter: "12"}, 429, "RESOURCE_EXHAUSTED", 12 * time.Second},
		{sim.Failure{Kind: llm.ErrOverloaded}, 503, "UNAVAILABLE", 0},
		{sim.Failure{Kind: llm.ErrContextLength}, 400, "INVALID_ARGUMENT", 0},
		{sim.Failure{Kind: llm.ErrInvalidRequest}, 400, "INVALID_ARGUMENT", 0},
		{sim.Failure{Kind: llm.ErrServer}, 500, "INTERNAL", 0},
		{sim.Failure{Kind: llm.ErrServer, HTML: true}, 502, "", 0},
		{sim.Failure{Kind: llm.ErrTransport}, 0, "", 0},
		{sim.Failure{Kind: llm.ErrInvalidResponse}, 0, "", 0},
		{sim.Failure{Kind: llm.ErrStreamInterrupted}, 0, "", 0},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			name := string(tc.failure.Kind)
			if tc.failure.HTML {
				name += "/html"
			}
			if stream {
				name += "/stream"
			} else if tc.failure.Kind == llm.ErrStreamInterrupted {
				continue
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
				if e.Kind != tc.failure.Kind || e.Status != tc.status || e.Code != tc.code || e.Provider != "gemini" || e.RetryAfter != tc.retry {
					t.Errorf("got kind %s status %d code %q provider %q retry %s, want %s %d %q gemini %s (%v)",
						e.Kind, e.Status, e.Code, e.Provider, e.RetryAfter, tc.failure.Kind, tc.status, tc.code, tc.retry, e)
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
		"mid-stream error": {sim.Reply{Text: "a long answer", ChunkSize: 2,
			MidStreamError: &sim.Failure{Kind: llm.ErrOverloaded}, ErrorAfterChunks: 3}, llm.ErrOverloaded, "UNAVAILABLE"},
		"cut before finishReason": {sim.Reply{Text: "a long answer", ChunkSize: 2, CutAfterChunks: 3}, llm.ErrStreamInterrupted, ""},
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
			if llmtest.Deltas(events, llm.EventTextDelta) == "" {
				t.Errorf("no text before the failure; the partial answer should have been delivered")
			}
		})
	}
}

func rawStream(body string) sim.Reply {
	return sim.Reply{Raw: &sim.RawResponse{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: body}}
}

func rawJSON(body string) sim.Reply {
	return sim.Reply{Raw: &sim.RawResponse{Header: http.Header{"Content-Type": {"application/json"}}, Body: body}}
}

func chunk(partsJSON, finish string) string {
	f := ""
	if finish != "" {
		f = `,"finishReason":"` + finish + `"`
	}
	return `data: {"candidates":[{"content":{"role":"model","parts":[` + partsJSON + `]}` + f + `}],"responseId":"r1","usageMetadata":{"promptTokenCount":3,"candidatesTokenCount":2}}` + "\r\n\r\n"
}

func TestBadInput(t *testing.T) {
	long := strings.Repeat("y", 100<<10) // one SSE line over 64 KiB
	cases := map[string]struct {
		reply   sim.Reply
		stream  bool
		kind    llm.ErrorKind // "" means success
		check   func(t *testing.T, r *llm.Response)
		message string
	}{
		"malformed JSON in a chunk": {reply: rawStream(chunk(`{"text":"a"}`, "") + "data: {\"candidates\": [\r\n\r\n" + chunk(`{"text":"b"}`, "STOP")),
			stream: true, kind: llm.ErrInvalidResponse, message: "invalid JSON"},
		"unknown part and field ignored": {reply: rawStream(chunk(`{"inventedPart":{"code":"1"}},{"text":"hi","brandNew":1}`, "") + chunk(`{"text":"!"}`, "STOP")),
			stream: true, check: func(t *testing.T, r *llm.Response) {
				if r.Text() != "hi!" || len(r.Message.Content) != 1 {
					t.Errorf("content = %+v", r.Message.Content)
				}
			}},
		"tool arguments not an object": {reply: sim.Reply{ToolCalls: []sim.ToolCallReply{{Name: "shell", Arguments: `{"cmd": "ls`}}},
			stream: true, check: func(t *testing.T, r *llm.Response) {
				calls := r.ToolCalls()
				if len(calls) != 1 || calls[0].ArgumentsError == "" || calls[0].Name != "shell" {
					t.Errorf("calls = %+v, want the arguments kept with ArgumentsError", calls)
				}
			}},
		"no candidates": {reply: rawJSON(`{"promptFeedback":{"blockReason":"PROHIBITED_CONTENT"},"usageMetadata":{"promptTokenCount":9}}`),
			kind: llm.ErrInvalidResponse, message: "blockReason PROHIBITED_CONTENT"},
		"no candidates streamed": {reply: rawStream(`data: {"promptFeedback":{"blockReason":"SAFETY"}}` + "\r\n\r\n"),
			stream: true, kind: llm.ErrInvalidResponse, message: "blockReason SAFETY"},
		"empty candidates without feedback": {reply: rawJSON(`{"candidates":[],"usageMetadata":{"promptTokenCount":9}}`),
			kind: llm.ErrInvalidResponse, message: "no candidates"},
		"HTML 502 page": {reply: sim.Reply{Failure: &sim.Failure{HTML: true}}, stream: true, kind: llm.ErrServer, message: "Bad Gateway"},
		"SSE line over 64 KiB": {reply: rawStream(chunk(`{"text":"`+long+`"}`, "STOP")), stream: true,
			check: func(t *testing.T, r *llm.Response) {
				if r.Text() != long {
					t.Errorf("text has %d bytes, want %d", len(r.Text()), len(long))
				}
			}},
		"streamed signature seals the text": {reply: rawStream(chunk(`{"text":"a"}`, "") + chunk(`{"text":"b"}`, "") + chunk(`{"text":"","thoughtSignature":"c2ln"}`, "STOP")),
			stream: true, check: func(t *testing.T, r *llm.Response) {
				if len(r.Message.Content) != 1 || r.Message.Content[0].Text != "ab" || r.Message.Content[0].Signature != "c2ln" {
					t.Errorf("content = %+v, want one text part ab signed c2ln", r.Message.Content)
				}
			}},
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
