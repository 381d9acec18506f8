package chatcompat

import (
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// callBuilder accumulates one streamed tool call.
type callBuilder struct {
	call llm.ToolCall
	args strings.Builder
}

// streamState assembles a response from chat.completion.chunk events.
type streamState struct {
	yield       func(llm.StreamEvent, error) bool
	id, model   string
	reasoning   strings.Builder
	text        strings.Builder
	calls       []*callBuilder
	byIndex     map[int]*callBuilder
	inReasoning bool
	inText      bool
	finish      string
	sawChoice   bool
	sawFinish   bool
	usage       llm.Usage
}

// decodeStream reads SSE chunks from body and yields stream events, ending
// with exactly one terminal element unless the consumer stops early.
func decodeStream(body io.Reader, yield func(llm.StreamEvent, error) bool) {
	s := &streamState{yield: yield, byIndex: map[int]*callBuilder{}}
	sr := llm.NewSSEReader(body)
	for {
		ev, err := sr.Next()
		if errors.Is(err, io.EOF) && s.sawFinish {
			s.done() // some servers end without [DONE]
			return
		}
		if err != nil {
			s.fail(readError(err))
			return
		}
		if ev.Data == "[DONE]" {
			s.done()
			return
		}
		if ev.Data == "" {
			continue
		}
		var chunk wireResponse
		if err := s.decode([]byte(ev.Data), &chunk); err != nil {
			s.fail(invalidResponse("a stream chunk is not valid JSON: "+err.Error(), []byte(ev.Data)))
			return
		}
		if chunk.Error != nil {
			s.fail(bodyError(chunk.Error.Message, chunk.Error.Type, chunk.Error.Code))
			return
		}
		if !s.handle(&chunk) {
			return
		}
	}
}

// wireChunk is a chunk without the fields that repeat on every chunk (id,
// model); once they are known, chunks are decoded into it, which skips
// allocating them again.
type wireChunk struct {
	Choices []wireChoice   `json:"choices"`
	Usage   *wireUsage     `json:"usage"`
	Error   *wireErrorBody `json:"error"`
}

func (s *streamState) decode(data []byte, c *wireResponse) error {
	if s.id == "" || s.model == "" {
		return json.Unmarshal(data, c)
	}
	var lean wireChunk
	if err := json.Unmarshal(data, &lean); err != nil {
		return err
	}
	c.Choices, c.Usage, c.Error = lean.Choices, lean.Usage, lean.Error
	return nil
}

func readError(err error) *llm.Error {
	if errors.Is(err, io.EOF) {
		return &llm.Error{Kind: llm.ErrStreamInterrupted, Provider: ProviderName,
			Message: "the stream ended before a finish_reason or [DONE]; the answer is incomplete"}
	}
	return llm.ReadError(ProviderName, err)
}

func (s *streamState) fail(e *llm.Error) { s.yield(llm.StreamEvent{}, e) }

func (s *streamState) emit(kind llm.StreamEventKind, delta string, call *llm.ToolCall) bool {
	return s.yield(llm.StreamEvent{Kind: kind, Delta: delta, ToolCall: call}, nil)
}

// handle processes one chunk; false means the consumer stopped.
func (s *streamState) handle(c *wireResponse) bool {
	if c.ID != "" {
		s.id = c.ID
	}
	if c.Model != "" {
		s.model = c.Model
	}
	if c.Usage != nil {
		s.usage = c.Usage.toUsage()
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // only the first choice is used
		}
		s.sawChoice = true
		if ch.Delta != nil && !s.delta(ch.Delta) {
			return false
		}
		if ch.FinishReason != "" {
			s.finish, s.sawFinish = ch.FinishReason, true
		}
	}
	return true
}

func (s *streamState) delta(d *wireContent) bool {
	if r := d.reasoning(); r != "" {
		if !s.inReasoning {
			s.inReasoning = true
			if !s.emit(llm.EventReasoningStart, "", nil) {
				return false
			}
		}
		s.reasoning.WriteString(r)
		if !s.emit(llm.EventReasoningDelta, r, nil) {
			return false
		}
	}
	if d.Content != nil && *d.Content != "" {
		if !s.endReasoning() {
			return false
		}
		if !s.inText {
			s.inText = true
			if !s.emit(llm.EventTextStart, "", nil) {
				return false
			}
		}
		s.text.WriteString(*d.Content)
		if !s.emit(llm.EventTextDelta, *d.Content, nil) {
			return false
		}
	}
	for i := range d.ToolCalls {
		if !s.endReasoning() || !s.toolCallDelta(&d.ToolCalls[i]) {
			return false
		}
	}
	return true
}

func (s *streamState) endReasoning() bool {
	if !s.inReasoning {
		return true
	}
	s.inReasoning = false
	return s.emit(llm.EventReasoningEnd, "", nil)
}

// toolCallDelta adds a fragment to the call at its index. Servers that
// omit the index send one call per id.
func (s *streamState) toolCallDelta(tc *wireToolCall) bool {
	var b *callBuilder
	if tc.Index != nil {
		b = s.byIndex[*tc.Index]
	} else if n := len(s.calls); n > 0 && (tc.ID == "" || tc.ID == s.calls[n-1].call.ID) {
		b = s.calls[n-1]
	}
	if b == nil {
		b = &callBuilder{call: llm.ToolCall{ID: tc.ID, Name: tc.Function.Name}}
		s.calls = append(s.calls, b)
		if tc.Index != nil {
			s.byIndex[*tc.Index] = b
		}
		if !s.emit(llm.EventToolCallStart, "", &llm.ToolCall{ID: b.call.ID, Name: b.call.Name}) {
			return false
		}
	} else {
		if b.call.ID == "" {
			b.call.ID = tc.ID
		}
		if b.call.Name == "" {
			b.call.Name = tc.Function.Name
		}
	}
	if tc.Function.Arguments == "" {
		return true
	}
	b.args.WriteString(tc.Function.Arguments)
	return s.emit(llm.EventToolCallDelta, tc.Function.Arguments, &llm.ToolCall{ID: b.call.ID, Name: b.call.Name})
}

// done closes open blocks, finishes the tool calls and yields the response.
func (s *streamState) done() {
	if !s.sawChoice {
		s.fail(&llm.Error{Kind: llm.ErrInvalidResponse, Provider: ProviderName, Message: "the stream carried no choices, so there is no answer to read"})
		return
	}
	if !s.endReasoning() {
		return
	}
	if s.inText && !s.emit(llm.EventTextEnd, "", nil) {
		return
	}
	calls := make([]llm.ToolCall, 0, len(s.calls))
	for _, b := range s.calls {
		call := b.call
		call.Arguments, call.ArgumentsError = llm.ParseToolArguments(b.args.String())
		calls = append(calls, call)
		if !s.emit(llm.EventToolCallEnd, "", &call) {
			return
		}
	}
	resp := &llm.Response{ID: s.id, Model: s.model, Provider: ProviderName, Usage: s.usage,
		Message: assemble(s.reasoning.String(), s.text.String(), calls), FinishReason: finishReason(s.finish, len(calls) > 0)}
	s.yield(llm.StreamEvent{Kind: llm.EventFinish, Response: resp}, nil)
}
