package adapterkit

import (
	"io"

	"github.com/agentfleet/agentfleet/llm"
)

// Answer finishes a whole response to req. With a ResponseFormat it checks
// the answer against the schema (llm.CheckAnswer); when forced is set (the
// request went out through llm.AsAnswerTool) the call of the answer tool
// first becomes the response's text, and a response left with no other
// calls ends with FinishStop.
func Answer(provider string, req llm.Request, forced bool, resp *llm.Response) (*llm.Response, error) {
	f := req.ResponseFormat
	if f == nil || resp == nil {
		return resp, nil
	}
	if forced {
		toolAnswer(resp, f.Name)
	}
	if err := llm.CheckAnswer(provider, req, resp); err != nil {
		return nil, err
	}
	return resp, nil
}

// toolAnswer turns calls of the answer tool into text parts in place.
func toolAnswer(resp *llm.Response, name string) {
	answered, others := false, false
	for i, p := range resp.Message.Content {
		if p.Kind != llm.KindToolCall || p.ToolCall == nil {
			continue
		}
		if p.ToolCall.Name != name {
			others = true
			continue
		}
		resp.Message.Content[i] = llm.ContentPart{Kind: llm.KindText, Text: string(p.ToolCall.Arguments)}
		answered = true
	}
	if answered && !others && resp.FinishReason.Reason == llm.FinishToolCalls {
		resp.FinishReason.Reason = llm.FinishStop
	}
}

// AnswerStream wraps the yield of a stream of a response to req as Answer
// does a whole one: with forced set, the answer tool's call events become
// text events (start, deltas of its arguments, end), and the final
// response is finished by Answer, whose error, if any, replaces the
// EventFinish.
func AnswerStream(provider string, req llm.Request, forced bool, yield func(llm.StreamEvent, error) bool) func(llm.StreamEvent, error) bool {
	f := req.ResponseFormat
	if f == nil {
		return yield
	}
	inAnswer := false
	return func(ev llm.StreamEvent, err error) bool {
		if err != nil {
			return yield(ev, err)
		}
		switch {
		case ev.Kind == llm.EventFinish:
			resp, err := Answer(provider, req, forced, ev.Response)
			if err != nil {
				return yield(llm.StreamEvent{}, err)
			}
			ev.Response = resp
		case !forced:
		case ev.Kind == llm.EventToolCallStart && ev.ToolCall != nil && ev.ToolCall.Name == f.Name:
			inAnswer = true
			ev = llm.StreamEvent{Kind: llm.EventTextStart}
		case ev.Kind == llm.EventToolCallDelta && inAnswer:
			ev = llm.StreamEvent{Kind: llm.EventTextDelta, Delta: ev.Delta}
		case ev.Kind == llm.EventToolCallEnd && inAnswer:
			inAnswer = false
			ev = llm.StreamEvent{Kind: llm.EventTextEnd}
		}
		return yield(ev, nil)
	}
}

// AnswerDecode wraps a stream decoder with AnswerStream, so that
// YieldStream adds the request id to a schema mismatch too.
func AnswerDecode(provider string, req llm.Request, forced bool, decode func(io.Reader, func(llm.StreamEvent, error) bool)) func(io.Reader, func(llm.StreamEvent, error) bool) {
	if req.ResponseFormat == nil {
		return decode
	}
	return func(body io.Reader, yield func(llm.StreamEvent, error) bool) {
		decode(body, AnswerStream(provider, req, forced, yield))
	}
}
