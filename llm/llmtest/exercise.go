package llmtest

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// Target is an adapter under test with the dialect that simulates its
// provider.
type Target struct {
	// Model is the model named in requests.
	Model string
	// New returns the adapter pointed at the sim server whose root URL
	// is serverURL (append the API prefix, e.g. "/v1"), with retry as its
	// policy.
	New func(t testing.TB, serverURL string, retry llm.RetryPolicy) llm.Client
	// NoReasoningSignature is set for wire formats without one (Chat
	// Completions), so the suite does not look for it.
	NoReasoningSignature bool
}

// Exercise runs the adapter conformance suite against target: content
// (text, tool calls, reasoning, usage) whole and streamed, every failure kind
// through the dialect with the retry policy's decisions, mid-stream errors,
// cuts, stalls, cancellation and the idle watchdog, a streaming request
// answered with something other than an event stream, the request id
// on every error that follows a response, tool choice and structured
// output (see exerciseToolChoice and exerciseStructuredOutput).
func Exercise(t *testing.T, target Target) {
	t.Run("Content", func(t *testing.T) { exerciseContent(t, target) })
	t.Run("Failures", func(t *testing.T) { exerciseFailures(t, target) })
	t.Run("Streams", func(t *testing.T) { exerciseStreams(t, target) })
	t.Run("RequestIDs", func(t *testing.T) { exerciseRequestIDs(t, target) })
	t.Run("ContextWindow", func(t *testing.T) { exerciseContextWindow(t, target) })
	t.Run("ToolChoice", func(t *testing.T) { exerciseToolChoice(t, target) })
	t.Run("StructuredOutput", func(t *testing.T) { exerciseStructuredOutput(t, target) })
}

// exerciseContextWindow gives the model a window: a request that fits is
// answered and reports its size as input tokens; one over it gets the
// provider's context-length error (status 400, its own code and message),
// is not retried and takes no scripted reply.
func exerciseContextWindow(t *testing.T, target Target) {
	modes(t, func(t *testing.T, stream bool) {
		h := newHarness(t, target, 2, 0)
		h.srv.SetContextWindow(target.Model, 100_000)
		h.srv.Enqueue(sim.Text("fits"), sim.Text("after the overflow"))
		_, resp, err := h.call(context.Background(), stream)
		if err != nil || resp.Text() != "fits" {
			t.Fatalf("a request inside the window: %v, %v", resp, err)
		}
		size := h.srv.Requests()[0].Tokens
		if size <= 0 || resp.Usage.InputTokens != size {
			t.Fatalf("input tokens %d, the server counted %d", resp.Usage.InputTokens, size)
		}
		h.srv.SetContextWindow(target.Model, size-1)
		_, _, err = h.call(context.Background(), stream)
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != llm.ErrContextLength || e.Status != http.StatusBadRequest {
			t.Fatalf("err = %v, want context_length with HTTP 400", err)
		}
		if n := len(h.srv.Requests()); n != 2 || h.srv.Pending() != 1 {
			t.Fatalf("%d requests, %d replies left; the overflow must not be retried nor take a reply", n, h.srv.Pending())
		}
		if e.Message == "" {
			t.Fatalf("error %v carries no provider message", e)
		}
	})
}

type harness struct {
	srv    *sim.Server
	client llm.Client
	sleeps *Sleeps
	target Target
}

func newHarness(t *testing.T, target Target, attempts int, idle time.Duration) *harness {
	t.Helper()
	srv := sim.NewServer()
	t.Cleanup(srv.Close)
	policy, sleeps := FastRetry(attempts)
	policy.IdleTimeout = idle
	return &harness{srv: srv, client: target.New(t, srv.URL(), policy), sleeps: sleeps, target: target}
}

func (h *harness) request() llm.Request {
	return llm.Request{Model: h.target.Model, Messages: []llm.Message{llm.SystemMessage("Be brief."), llm.UserMessage("Hello?")},
		Tools: []llm.ToolDefinition{{Name: "add", Description: "Add two numbers", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}}}`)}}}
}

// call runs one request, whole or streamed.
func (h *harness) call(ctx context.Context, stream bool) ([]llm.StreamEvent, *llm.Response, error) {
	if !stream {
		resp, err := h.client.Complete(ctx, h.request())
		return nil, resp, err
	}
	return Collect(h.client.Stream(ctx, h.request()))
}

func modes(t *testing.T, f func(t *testing.T, stream bool)) {
	t.Run("whole", func(t *testing.T) { f(t, false) })
	t.Run("stream", func(t *testing.T) { f(t, true) })
}

func exerciseContent(t *testing.T, target Target) {
	usage := llm.Usage{InputTokens: 120, OutputTokens: 45, ReasoningTokens: 12, CacheReadTokens: 100}
	t.Run("text", func(t *testing.T) {
		modes(t, func(t *testing.T, stream bool) {
			h := newHarness(t, target, 1, 0)
			text := "Olá! Here is a longer answer, cut into several chunks. ✓"
			h.srv.Enqueue(sim.Reply{Text: text, Usage: usage, ChunkSize: 7})
			events, resp, err := h.call(context.Background(), stream)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if resp.Text() != text || resp.FinishReason.Reason != llm.FinishStop {
				t.Errorf("text %q finish %+v; want %q stop", resp.Text(), resp.FinishReason, text)
			}
			if resp.Usage.InputTokens != usage.InputTokens || resp.Usage.OutputTokens != usage.OutputTokens {
				t.Errorf("usage = %+v, want %+v", resp.Usage, usage)
			}
			if stream && Deltas(events, llm.EventTextDelta) != text {
				t.Errorf("text deltas %q, want %q", Deltas(events, llm.EventTextDelta), text)
			}
		})
	})
	t.Run("tool calls", func(t *testing.T) {
		modes(t, func(t *testing.T, stream bool) {
			h := newHarness(t, target, 1, 0)
			h.srv.Enqueue(sim.Reply{ToolCalls: []sim.ToolCallReply{{ID: "call_1", Name: "add", Arguments: `{"a":2,"b":3}`}, {ID: "call_2", Name: "add", Arguments: `{"a":4,"b":5}`}}, ChunkSize: 4})
			events, resp, err := h.call(context.Background(), stream)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			calls := resp.ToolCalls()
			if len(calls) != 2 || resp.FinishReason.Reason != llm.FinishToolCalls {
				t.Fatalf("calls %+v finish %+v; want 2 calls, tool_calls", calls, resp.FinishReason)
			}
			for i, want := range []string{`{"a":2,"b":3}`, `{"a":4,"b":5}`} {
				c := calls[i]
				if c.Name != "add" || c.ArgumentsError != "" || !jsonEqual(c.Arguments, want) {
					t.Errorf("call %d = %+v, want add %s", i, c, want)
				}
				if c.ID == "" {
					t.Errorf("call %d has no ID", i)
				}
			}
			if stream && countKind(events, llm.EventToolCallEnd) != 2 {
				t.Errorf("got %d tool_call_end events, want 2", countKind(events, llm.EventToolCallEnd))
			}
		})
	})
	t.Run("invalid tool arguments", func(t *testing.T) {
		modes(t, func(t *testing.T, stream bool) {
			h := newHarness(t, target, 1, 0)
			h.srv.Enqueue(sim.Reply{ToolCalls: []sim.ToolCallReply{{ID: "call_1", Name: "add", Arguments: `{"a":2,`}}})
			_, resp, err := h.call(context.Background(), stream)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			calls := resp.ToolCalls()
			if len(calls) != 1 || calls[0].ArgumentsError == "" || calls[0].Name != "add" {
				t.Fatalf("calls = %+v, want one add call with ArgumentsError set", calls)
			}
		})
	})
	t.Run("reasoning", func(t *testing.T) {
		modes(t, func(t *testing.T, stream bool) {
			h := newHarness(t, target, 1, 0)
			h.srv.Enqueue(sim.Reply{Reasoning: "First I think, then I answer.", ReasoningSignature: "sig-abc123", Text: "42", ChunkSize: 5})
			events, resp, err := h.call(context.Background(), stream)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if resp.Reasoning() != "First I think, then I answer." || resp.Text() != "42" {
				t.Errorf("reasoning %q text %q", resp.Reasoning(), resp.Text())
			}
			if stream && Deltas(events, llm.EventReasoningDelta) != "First I think, then I answer." {
				t.Errorf("reasoning deltas %q", Deltas(events, llm.EventReasoningDelta))
			}
			if !target.NoReasoningSignature && !hasSignature(resp, "sig-abc123") {
				t.Errorf("the signature sig-abc123 is not kept on the response: %+v", resp.Message.Content)
			}
		})
	})
}

func hasSignature(resp *llm.Response, sig string) bool {
	for _, p := range resp.Message.Content {
		if p.Signature == sig || p.Reasoning != nil && p.Reasoning.Signature == sig ||
			p.ToolCall != nil && p.ToolCall.Signature == sig {
			return true
		}
	}
	return false
}

func countKind(events []llm.StreamEvent, kind llm.StreamEventKind) int {
	n := 0
	for _, ev := range events {
		if ev.Kind == kind {
			n++
		}
	}
	return n
}

func jsonEqual(got json.RawMessage, want string) bool {
	var a, b any
	return json.Unmarshal(got, &a) == nil && json.Unmarshal([]byte(want), &b) == nil && mustJSON(a) == mustJSON(b)
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// failureCase is one failure kind and what the adapter must make of it.
type failureCase struct {
	name      string
	failure   sim.Failure
	want      llm.ErrorKind
	retried   bool
	wantWait  time.Duration // the retry wait the provider asked for, 0: backoff
	onlyWhole bool
}

var failureCases = []failureCase{
	{name: "authentication", failure: sim.Failure{Kind: llm.ErrAuthentication}, want: llm.ErrAuthentication},
	{name: "permission", failure: sim.Failure{Kind: llm.ErrPermission}, want: llm.ErrPermission},
	{name: "quota", failure: sim.Failure{Kind: llm.ErrQuota}, want: llm.ErrQuota},
	{name: "context length", failure: sim.Failure{Kind: llm.ErrContextLength}, want: llm.ErrContextLength},
	{name: "invalid request", failure: sim.Failure{Kind: llm.ErrInvalidRequest}, want: llm.ErrInvalidRequest},
	{name: "rate limited", failure: sim.Failure{Kind: llm.ErrRateLimited}, want: llm.ErrRateLimited, retried: true},
	{name: "rate limited retry-after", failure: sim.Failure{Kind: llm.ErrRateLimited, RetryAfter: "3"}, want: llm.ErrRateLimited, retried: true, wantWait: 3 * time.Second},
	{name: "rate limited retry-after-ms", failure: sim.Failure{Kind: llm.ErrRateLimited, RetryAfterMs: "1250"}, want: llm.ErrRateLimited, retried: true, wantWait: 1250 * time.Millisecond},
	{name: "overloaded", failure: sim.Failure{Kind: llm.ErrOverloaded}, want: llm.ErrOverloaded, retried: true},
	{name: "server", failure: sim.Failure{Kind: llm.ErrServer}, want: llm.ErrServer, retried: true},
	{name: "html 502", failure: sim.Failure{Kind: llm.ErrServer, HTML: true}, want: llm.ErrServer, retried: true},
	{name: "transport", failure: sim.Failure{Kind: llm.ErrTransport}, want: llm.ErrTransport, retried: true},
	{name: "stream interrupted", failure: sim.Failure{Kind: llm.ErrStreamInterrupted}, want: llm.ErrStreamInterrupted},
	{name: "invalid response", failure: sim.Failure{Kind: llm.ErrInvalidResponse}, want: llm.ErrInvalidResponse, onlyWhole: true},
}

func exerciseFailures(t *testing.T, target Target) {
	for _, fc := range failureCases {
		t.Run(fc.name, func(t *testing.T) {
			if fc.onlyWhole { // a non-JSON body is a distinct failure only for a whole response
				t.Run("whole", func(t *testing.T) { exerciseFailure(t, target, fc, false) })
				return
			}
			modes(t, func(t *testing.T, stream bool) { exerciseFailure(t, target, fc, stream) })
		})
	}
	t.Run("retry-after beyond the cap", func(t *testing.T) {
		h := newHarness(t, target, 4, 0)
		h.srv.Enqueue(sim.Reply{Failure: &sim.Failure{Kind: llm.ErrRateLimited, RetryAfter: "3600"}}, sim.Text("unused"))
		_, _, err := h.call(context.Background(), false)
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != llm.ErrRateLimited || e.RetryAfter != time.Hour {
			t.Fatalf("err = %v, want rate limited with RetryAfter 1h", err)
		}
		if n := len(h.srv.Requests()); n != 1 || len(h.sleeps.Waits()) != 0 {
			t.Fatalf("%d requests, waits %v; want 1 request and no wait", n, h.sleeps.Waits())
		}
	})
	t.Run("canceled before the call", func(t *testing.T) {
		modes(t, func(t *testing.T, stream bool) {
			h := newHarness(t, target, 2, 0)
			h.srv.Enqueue(sim.Text("unused"))
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, _, err := h.call(ctx, stream)
			if llm.KindOf(err) != llm.ErrCanceled || !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want canceled", err)
			}
			if n := len(h.srv.Requests()); n != 0 {
				t.Fatalf("%d requests sent with a canceled context, want 0", n)
			}
		})
	})
	t.Run("canceled while waiting for the answer", func(t *testing.T) {
		h := newHarness(t, target, 1, 0)
		h.srv.Enqueue(sim.Fail(llm.ErrCanceled))
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer wcancel()
			_, _ = h.srv.WaitRequests(wctx, 1)
			cancel()
		}()
		_, _, err := h.call(ctx, true)
		if llm.KindOf(err) != llm.ErrCanceled || !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want canceled", err)
		}
	})
}

// exerciseFailure answers the failure then a good reply: a retryable
// failure must be retried into the good reply, any other returned at once.
func exerciseFailure(t *testing.T, target Target, fc failureCase, stream bool) {
	h := newHarness(t, target, 2, 0)
	h.srv.Enqueue(sim.Reply{Failure: &fc.failure}, sim.Text("recovered"))
	_, resp, err := h.call(context.Background(), stream)
	if fc.retried {
		if err != nil || resp.Text() != "recovered" {
			t.Fatalf("got %v, %v; want the retry to recover", resp, err)
		}
		waits := h.sleeps.Waits()
		if len(waits) != 1 || fc.wantWait != 0 && waits[0] != fc.wantWait {
			t.Fatalf("waits %v, want one of %s", waits, fc.wantWait)
		}
		// Without retries left the same failure is reported with its kind.
		h = newHarness(t, target, 1, 0)
		h.srv.Enqueue(sim.Reply{Failure: &fc.failure})
		_, _, err = h.call(context.Background(), stream)
	}
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != fc.want {
		t.Fatalf("err = %v, want kind %s", err, fc.want)
	}
	if !fc.retried && (len(h.srv.Requests()) != 1 || len(h.sleeps.Waits()) != 0) {
		t.Fatalf("%d requests and waits %v; a %s failure must not be retried", len(h.srv.Requests()), h.sleeps.Waits(), fc.want)
	}
	if fc.failure.HTML && (strings.Contains(e.Message, "<") || !strings.Contains(e.Message, "502")) {
		t.Errorf("message %q should be the HTML page's text", e.Message)
	}
	if e.Provider == "" {
		t.Errorf("error %v names no provider", e)
	}
}

func exerciseStreams(t *testing.T, target Target) {
	long := strings.Repeat("streaming text ", 20)
	t.Run("mid-stream error", func(t *testing.T) {
		h := newHarness(t, target, 2, 0)
		h.srv.Enqueue(sim.Reply{Text: long, MidStreamError: &sim.Failure{Kind: llm.ErrServer}, ErrorAfterChunks: 3}, sim.Text("unused"))
		_, _, err := h.call(context.Background(), true)
		if err == nil || llm.KindOf(err) == "" {
			t.Fatalf("err = %v, want an *llm.Error", err)
		}
		if len(h.srv.Requests()) != 1 {
			t.Fatalf("a stream that delivered events was retried (%d requests)", len(h.srv.Requests()))
		}
	})
	t.Run("not an event stream", func(t *testing.T) {
		h := newHarness(t, target, 2, 0)
		h.srv.Enqueue(sim.Reply{Raw: &sim.RawResponse{Header: http.Header{"Content-Type": {"application/json"}}, Body: `{"id":"resp_1"}`}}, sim.Text("unused"))
		events, _, err := h.call(context.Background(), true)
		if llm.KindOf(err) != llm.ErrInvalidResponse || !strings.Contains(err.Error(), "application/json") {
			t.Fatalf("err = %v, want invalid response naming the Content-Type", err)
		}
		if len(events) != 0 || len(h.srv.Requests()) != 1 {
			t.Fatalf("%d events, %d requests; want none and no retry", len(events), len(h.srv.Requests()))
		}
	})
	t.Run("cut before the final event", func(t *testing.T) {
		h := newHarness(t, target, 2, 0)
		h.srv.Enqueue(sim.Reply{Text: long, CutAfterChunks: 4}, sim.Text("unused"))
		events, _, err := h.call(context.Background(), true)
		if llm.KindOf(err) != llm.ErrStreamInterrupted {
			t.Fatalf("err = %v, want stream interrupted", err)
		}
		if len(events) == 0 || len(h.srv.Requests()) != 1 {
			t.Fatalf("%d events, %d requests; want events before the cut and no retry", len(events), len(h.srv.Requests()))
		}
	})
	t.Run("idle watchdog", func(t *testing.T) {
		h := newHarness(t, target, 1, 100*time.Millisecond)
		h.srv.Enqueue(sim.Reply{Text: long, StallAfterChunks: 3})
		_, _, err := h.call(context.Background(), true)
		if llm.KindOf(err) != llm.ErrStreamInterrupted {
			t.Fatalf("err = %v, want stream interrupted by the idle watchdog", err)
		}
	})
	t.Run("cancel a stalled stream", func(t *testing.T) {
		h := newHarness(t, target, 1, 0)
		h.srv.Enqueue(sim.Reply{Text: long, StallAfterChunks: 3})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var err error
		for _, e := range h.client.Stream(ctx, h.request()) {
			if e != nil {
				err = e
				break
			}
			cancel() // the stream stalls after a few events; cancel at the first
		}
		if llm.KindOf(err) != llm.ErrCanceled {
			t.Fatalf("err = %v, want canceled", err)
		}
	})
	t.Run("break early then reuse", func(t *testing.T) {
		h := newHarness(t, target, 1, 0)
		h.srv.Enqueue(sim.Reply{Text: long, StallAfterChunks: 3}, sim.Text("second"))
		for range h.client.Stream(context.Background(), h.request()) { //nolint:errcheck // breaks at the first event on purpose
			break
		}
		_, resp, err := h.call(context.Background(), true)
		if err != nil || resp.Text() != "second" {
			t.Fatalf("after breaking out: %v, %v", resp, err)
		}
	})
}

// exerciseRequestIDs checks that an error following a response carries the
// request id from any of the headers in llm.RequestIDHeaders: an
// unreadable whole body, a stream that is not one, a cut stream and an
// error event mid-stream.
func exerciseRequestIDs(t *testing.T, target Target) {
	long := strings.Repeat("streaming text ", 20)
	cases := []struct {
		name   string
		reply  sim.Reply
		stream bool
	}{
		{"invalid whole body", sim.Reply{Failure: &sim.Failure{Kind: llm.ErrInvalidResponse}}, false},
		{"not an event stream", sim.Reply{Raw: &sim.RawResponse{Header: http.Header{"Content-Type": {"text/html"}}, Body: "<html>hi</html>"}}, true},
		{"cut stream", sim.Reply{Text: long, CutAfterChunks: 3}, true},
		{"mid-stream error", sim.Reply{Text: long, MidStreamError: &sim.Failure{Kind: llm.ErrServer}, ErrorAfterChunks: 2}, true},
	}
	for _, header := range llm.RequestIDHeaders {
		for _, c := range cases {
			t.Run(header+"/"+c.name, func(t *testing.T) {
				h := newHarness(t, target, 1, 0)
				rep := c.reply
				rep.Header = http.Header{}
				rep.Header.Set(header, "req-llmtest-42")
				h.srv.Enqueue(rep)
				_, _, err := h.call(context.Background(), c.stream)
				var e *llm.Error
				if !errors.As(err, &e) || e.RequestID != "req-llmtest-42" {
					t.Fatalf("err = %#v, want an *llm.Error with RequestID req-llmtest-42", err)
				}
			})
		}
	}
}
