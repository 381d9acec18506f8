package openai

import (
	"encoding/json"
	"errors"
	"io"

	"github.com/agentfleet/agentfleet/llm"
)

// wireEvent is one Responses API stream event; which fields are set
// depends on Type.
type wireEvent struct {
	Type         string          `json:"type"`
	Response     *wireResponse   `json:"response"`
	Item         json.RawMessage `json:"item"`
	OutputIndex  int             `json:"output_index"`
	SummaryIndex int             `json:"summary_index"`
	Delta        string          `json:"delta"`
	Code         any             `json:"code"`    // error event
	Message      string          `json:"message"` // error event
}

// ignoredEvents are events whose content arrives again in events we read
// (the deltas, output_item.done, response.completed); skipping them by their
// SSE event name saves decoding their JSON. Events without a name are always
// decoded.
var ignoredEvents = map[string]bool{
	"response.created":                      true,
	"response.in_progress":                  true,
	"response.queued":                       true,
	"response.content_part.added":           true,
	"response.content_part.done":            true,
	"response.output_text.done":             true,
	"response.refusal.done":                 true,
	"response.function_call_arguments.done": true,
	"response.reasoning_summary_text.done":  true,
	"response.reasoning_summary_part.done":  true,
	"response.reasoning_text.done":          true,
	"response.output_text.annotation.added": true,
}

// streamState assembles a response from stream events. Parts come from
// output_item.done events; the final response.completed object, when it
// carries the output, is authoritative.
type streamState struct {
	yield func(llm.StreamEvent, error) bool
	items []json.RawMessage     // output items from output_item.done, parsed only if the final event lacks them
	calls map[int]*llm.ToolCall // in progress, by output index
}

// decodeStream reads SSE events from body and yields stream events, ending
// with exactly one terminal element (EventFinish or an error) unless the
// consumer stops early.
func decodeStream(body io.Reader, yield func(llm.StreamEvent, error) bool) {
	s := &streamState{yield: yield, calls: map[int]*llm.ToolCall{}}
	sr := llm.NewSSEReader(body)
	for {
		ev, err := sr.Next()
		if err != nil {
			s.fail(readError(err))
			return
		}
		if ev.Data == "" || ev.Data == "[DONE]" || ignoredEvents[ev.Event] {
			continue
		}
		var we wireEvent
		if err := json.Unmarshal([]byte(ev.Data), &we); err != nil {
			s.fail(invalidResponse("stream event "+ev.Event+" is not valid JSON: "+err.Error(), []byte(ev.Data)))
			return
		}
		if cont, finished := s.handle(&we); !cont || finished {
			return
		}
	}
}

func readError(err error) *llm.Error {
	if errors.Is(err, io.EOF) {
		return &llm.Error{Kind: llm.ErrStreamInterrupted, Provider: ProviderName,
			Message: "the stream ended before response.completed; the answer is incomplete"}
	}
	return llm.ReadError(ProviderName, err)
}

func (s *streamState) fail(e *llm.Error) { s.yield(llm.StreamEvent{}, e) }

func (s *streamState) emit(ev llm.StreamEvent) bool { return s.yield(ev, nil) }

// handle processes one event. cont is false when the consumer stopped;
// finished is true after the terminal element was yielded.
func (s *streamState) handle(we *wireEvent) (cont, finished bool) {
	switch we.Type {
	case "response.output_item.added":
		return s.itemAdded(we), false
	case "response.output_text.delta", "response.refusal.delta":
		return s.emit(llm.StreamEvent{Kind: llm.EventTextDelta, Delta: we.Delta}), false
	case "response.reasoning_summary_part.added":
		if we.SummaryIndex > 0 {
			return s.emit(llm.StreamEvent{Kind: llm.EventReasoningDelta, Delta: summarySeparator}), false
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		return s.emit(llm.StreamEvent{Kind: llm.EventReasoningDelta, Delta: we.Delta}), false
	case "response.function_call_arguments.delta":
		if call := s.calls[we.OutputIndex]; call != nil {
			return s.emit(llm.StreamEvent{Kind: llm.EventToolCallDelta, Delta: we.Delta, ToolCall: call}), false
		}
	case "response.output_item.done":
		return s.itemDone(we), false
	case "response.completed", "response.incomplete":
		s.finish(we.Response)
		return true, true
	case "response.failed":
		e := &llm.Error{Kind: llm.ErrServer, Provider: ProviderName, Message: "the response failed without an error object"}
		if we.Response != nil && we.Response.Error != nil {
			e = streamError(we.Response.Error.code(), we.Response.Error.Message)
		}
		s.fail(e)
		return true, true
	case "error":
		s.fail(streamError((&wireError{Code: we.Code}).code(), we.Message))
		return true, true
	}
	return true, false // unknown and informational events are ignored
}

func (s *streamState) itemAdded(we *wireEvent) bool {
	var it wireItem
	if json.Unmarshal(we.Item, &it) != nil {
		return true // the done event carries the item again and reports bad JSON
	}
	switch it.Type {
	case "reasoning":
		return s.emit(llm.StreamEvent{Kind: llm.EventReasoningStart})
	case "message":
		return s.emit(llm.StreamEvent{Kind: llm.EventTextStart})
	case "function_call":
		call := &llm.ToolCall{ID: it.CallID, Name: it.Name, ItemID: it.ID}
		s.calls[we.OutputIndex] = call
		return s.emit(llm.StreamEvent{Kind: llm.EventToolCallStart, ToolCall: call})
	case "computer_call":
		// Its action comes whole with the done event.
		return s.emit(llm.StreamEvent{Kind: llm.EventToolCallStart, ToolCall: &llm.ToolCall{ID: it.CallID, Name: ComputerUseType, ItemID: it.ID}})
	}
	return true
}

// itemDone ends an output item. Only function calls are decoded here (the
// end event carries the complete call); the others are kept raw for the
// final response.
func (s *streamState) itemDone(we *wireEvent) bool {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(we.Item, &head); err != nil {
		s.fail(invalidResponse("an output item is not valid JSON: "+err.Error(), we.Item))
		return false
	}
	s.items = append(s.items, we.Item)
	switch head.Type {
	case "reasoning":
		return s.emit(llm.StreamEvent{Kind: llm.EventReasoningEnd})
	case "message":
		return s.emit(llm.StreamEvent{Kind: llm.EventTextEnd})
	case "function_call", "computer_call":
		part, _, err := itemPart(we.Item)
		if err != nil {
			s.fail(err)
			return false
		}
		delete(s.calls, we.OutputIndex)
		return s.emit(llm.StreamEvent{Kind: llm.EventToolCallEnd, ToolCall: part.ToolCall})
	}
	return true
}

// finish yields the final response, preferring the output carried by the
// terminal event and falling back to the items seen in the stream.
func (s *streamState) finish(w *wireResponse) {
	if w == nil {
		s.fail(&llm.Error{Kind: llm.ErrInvalidResponse, Provider: ProviderName, Message: "the final stream event carries no response object"})
		return
	}
	if len(w.Output) == 0 {
		w.Output = s.items
	}
	resp, err := w.toResponse()
	if err != nil {
		s.fail(err)
		return
	}
	s.emit(llm.StreamEvent{Kind: llm.EventFinish, Response: resp})
}
