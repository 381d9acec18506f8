package llmtest

import (
	"context"
	"errors"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/sim"
)

// callWith runs req, whole or streamed.
func (h *harness) callWith(req llm.Request, stream bool) ([]llm.StreamEvent, *llm.Response, error) {
	return Call(context.Background(), h.client, req, stream)
}

// exerciseToolChoice sends each tool choice and checks that the simulated
// provider read it, in its own wire format, as the same choice; that a
// forced call of a named tool is answered with that call even when the
// script gives text (the sim answers as an obedient model); and that a
// named tool that is not offered is refused before anything is sent.
func exerciseToolChoice(t *testing.T, target Target) {
	add := sim.ToolCall("call_tc", "add", `{"a":1,"b":2}`)
	cases := []struct {
		name   string
		choice llm.ToolChoice
		reply  sim.Reply
		call   bool
	}{
		{"auto", llm.ToolChoice{Mode: llm.ToolChoiceAuto}, sim.Text("no tool needed"), false},
		{"none", llm.ToolChoice{Mode: llm.ToolChoiceNone}, sim.Text("no tools allowed"), false},
		{"required", llm.ToolChoice{Mode: llm.ToolChoiceRequired}, add, true},
		{"named", llm.ToolChoice{Mode: llm.ToolChoiceNamed, Name: "add"}, add, true},
		{"named answered with text", llm.ToolChoice{Mode: llm.ToolChoiceNamed, Name: "add"}, sim.Text(`{"a":1,"b":2}`), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			modes(t, func(t *testing.T, stream bool) {
				h := newHarness(t, target, 1, 0)
				h.srv.Enqueue(c.reply)
				req := h.request()
				req.ToolChoice = c.choice
				_, resp, err := h.callWith(req, stream)
				if err != nil {
					t.Fatalf("call: %v", err)
				}
				if got := h.srv.Requests()[0].Constraints.ToolChoice; got != c.choice {
					t.Errorf("the provider read tool choice %+v, want %+v", got, c.choice)
				}
				calls := resp.ToolCalls()
				if c.call != (len(calls) == 1) || c.call && (calls[0].Name != "add" || !jsonEqual(calls[0].Arguments, `{"a":1,"b":2}`)) {
					t.Errorf("calls %+v text %q; want a call of add: %v", calls, resp.Text(), c.call)
				}
			})
		})
	}
	t.Run("named tool not offered", func(t *testing.T) {
		h := newHarness(t, target, 1, 0)
		req := h.request()
		req.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceNamed, Name: "subtract"}
		_, err := h.client.Complete(context.Background(), req)
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != llm.ErrInvalidRequest {
			t.Fatalf("err = %v, want invalid_request", err)
		}
		if n := len(h.srv.Requests()); n != 0 {
			t.Fatalf("%d requests sent; a bad tool choice must be refused before sending", n)
		}
	})
}

// exerciseStructuredOutput asks for AnswerFormat and checks that the
// provider read a response format (natively, or as a forced call of the
// tool "answer"), that the answer arrives as text, whole and streamed as
// text deltas, whatever the wire carried it in, that an answer breaking
// the schema is ErrInvalidResponse with a *llm.SchemaError, and that a
// tool round before the answer is not validated.
func exerciseStructuredOutput(t *testing.T, target Target) {
	const answer = `{"answer":5,"unit":"apples"}`
	structured := func(h *harness) llm.Request {
		return llm.Request{Model: h.target.Model, Messages: []llm.Message{llm.UserMessage("2+3 apples?")}, ResponseFormat: AnswerFormat()}
	}
	t.Run("answer", func(t *testing.T) {
		modes(t, func(t *testing.T, stream bool) {
			h := newHarness(t, target, 1, 0)
			h.srv.Enqueue(sim.Reply{Text: answer, ChunkSize: 4})
			events, resp, err := h.callWith(structured(h), stream)
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if resp.Text() != answer || len(resp.ToolCalls()) != 0 || resp.FinishReason.Reason != llm.FinishStop {
				t.Errorf("text %q calls %+v finish %+v; want the answer as text, stop", resp.Text(), resp.ToolCalls(), resp.FinishReason)
			}
			if stream && (Deltas(events, llm.EventTextDelta) != answer || countKind(events, llm.EventToolCallStart) != 0) {
				t.Errorf("stream: text deltas %q, %d tool call starts", Deltas(events, llm.EventTextDelta), countKind(events, llm.EventToolCallStart))
			}
			checkFormatSent(t, h.srv.Requests()[0].Constraints)
		})
	})
	t.Run("mismatch", func(t *testing.T) {
		modes(t, func(t *testing.T, stream bool) {
			h := newHarness(t, target, 1, 0)
			h.srv.Enqueue(sim.Text(`{"answer":"five"}`))
			_, _, err := h.callWith(structured(h), stream)
			var e *llm.Error
			var se *llm.SchemaError
			if !errors.As(err, &e) || e.Kind != llm.ErrInvalidResponse || !errors.As(err, &se) || len(se.Violations) < 2 {
				t.Fatalf("err = %v, want invalid_response with a SchemaError naming the wrong type and the missing unit", err)
			}
		})
	})
	t.Run("tool round first", func(t *testing.T) {
		modes(t, func(t *testing.T, stream bool) {
			h := newHarness(t, target, 1, 0)
			h.srv.Enqueue(sim.ToolCall("call_1", "add", `{"a":2,"b":3}`))
			req := h.request()
			req.ResponseFormat = AnswerFormat()
			_, resp, err := h.callWith(req, stream)
			if err != nil {
				t.Fatalf("a tool call before the answer: %v", err)
			}
			if calls := resp.ToolCalls(); len(calls) != 1 || calls[0].Name != "add" {
				t.Fatalf("calls %+v, want the add call", calls)
			}
		})
	})
	t.Run("bad format refused", func(t *testing.T) {
		h := newHarness(t, target, 1, 0)
		req := structured(h)
		req.ResponseFormat.Schema = []byte(`{"type":"array"}`)
		_, err := h.client.Complete(context.Background(), req)
		var e *llm.Error
		if !errors.As(err, &e) || e.Kind != llm.ErrInvalidRequest || len(h.srv.Requests()) != 0 {
			t.Fatalf("err = %v after %d requests, want invalid_request before sending", err, len(h.srv.Requests()))
		}
	})
}

// checkFormatSent: the provider saw the format natively, or a forced call
// of the tool named after it.
func checkFormatSent(t *testing.T, c sim.Constraints) {
	t.Helper()
	if f := c.Format; f != nil {
		if (f.Name != "" && f.Name != "answer") || !jsonEqual(f.Schema, string(AnswerSchema)) {
			t.Errorf("the provider read format %q with schema %s", f.Name, f.Schema)
		}
		return
	}
	if c.ToolChoice != (llm.ToolChoice{Mode: llm.ToolChoiceNamed, Name: "answer"}) {
		t.Errorf("the provider read no response format and tool choice %+v, want a forced call of answer", c.ToolChoice)
	}
}
