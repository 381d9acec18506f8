package anthropic

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// blockKind is what a streamed content block holds.
type blockKind uint8

const (
	blockUnknown blockKind = iota // a block type we do not model; its deltas are dropped
	blockText
	blockThinking
	blockRedacted
	blockToolUse
	blockServer // a server tool's use or result: content, not a call
)

// blockState accumulates one content block between its start and stop.
type blockState struct {
	kind      blockKind
	text      strings.Builder // text or thinking
	signature strings.Builder
	data      string // redacted_thinking payload
	id, name  string
	args      []byte
	server    *wireBlockIn    // a server tool block as it started
	part      llm.ContentPart // set when the block stops
	stopped   bool
}

// streamDecoder turns Messages API stream events into unified events and
// assembles the final response. One decoder serves one stream; it is not
// safe for concurrent use.
type streamDecoder struct {
	resp       llm.Response
	usage      wireUsage
	stopReason string
	blocks     []*blockState     // by content block index
	out        []llm.StreamEvent // events produced by the last feed, reused
	ev         wireEvent
	buf        []byte // the event data as bytes, reused
}

func newStreamDecoder() *streamDecoder {
	return &streamDecoder{resp: llm.Response{Provider: providerName}}
}

// feed decodes one SSE event. The unified events it produces are in d.out
// until the next call. done reports message_stop.
func (d *streamDecoder) feed(event, data string) (done bool, err error) {
	d.out = d.out[:0]
	if data == "" {
		return false, nil
	}
	d.ev = wireEvent{}
	d.buf = append(d.buf[:0], data...)
	if err := json.Unmarshal(d.buf, &d.ev); err != nil {
		return false, invalidResponse(fmt.Sprintf("stream event %q carries invalid JSON: %v", event, err), err)
	}
	typ := d.ev.Type
	if typ == "" {
		typ = event
	}
	switch typ {
	case "message_start":
		d.messageStart()
	case "content_block_start":
		return false, d.blockStart()
	case "content_block_delta":
		return false, d.blockDelta()
	case "content_block_stop":
		return false, d.blockStop(d.ev.Index)
	case "message_delta":
		d.messageDelta()
	case "message_stop":
		return true, nil
	case "error":
		return false, streamEventError(d.ev.Error)
	}
	// ping and event types added after this was written are ignored.
	return false, nil
}

func (d *streamDecoder) messageStart() {
	if m := d.ev.Message; m != nil {
		d.resp.ID, d.resp.Model = m.ID, m.Model
		d.usage = m.Usage
	}
}

func (d *streamDecoder) messageDelta() {
	if d.ev.Delta.StopReason != "" {
		d.stopReason = d.ev.Delta.StopReason
	}
	u := d.ev.Usage
	if u == nil {
		return
	}
	// message_delta usage is cumulative; input counts appear only in newer
	// API versions, so keep message_start's when absent.
	d.usage.OutputTokens = u.OutputTokens
	if u.InputTokens > 0 {
		d.usage.InputTokens = u.InputTokens
	}
	if u.CacheReadInputTokens > 0 {
		d.usage.CacheReadInputTokens = u.CacheReadInputTokens
	}
	if u.CacheCreationInputTokens > 0 {
		d.usage.CacheCreationInputTokens = u.CacheCreationInputTokens
	}
}

func (d *streamDecoder) blockStart() error {
	i, cb := d.ev.Index, d.ev.ContentBlock
	if cb == nil {
		return invalidResponse(fmt.Sprintf("content_block_start for index %d has no content_block", i), nil)
	}
	if i < 0 || i > len(d.blocks)+1024 {
		return invalidResponse(fmt.Sprintf("content_block_start has index %d out of range", i), nil)
	}
	for len(d.blocks) <= i {
		d.blocks = append(d.blocks, nil)
	}
	b := &blockState{id: cb.ID, name: cb.Name}
	d.blocks[i] = b
	switch cb.Type {
	case "text":
		b.kind = blockText
		d.emit(llm.StreamEvent{Kind: llm.EventTextStart})
		d.appendText(b, cb.Text, llm.EventTextDelta)
	case "thinking":
		b.kind = blockThinking
		b.signature.WriteString(cb.Signature)
		d.emit(llm.StreamEvent{Kind: llm.EventReasoningStart})
		d.appendText(b, cb.Thinking, llm.EventReasoningDelta)
	case "redacted_thinking":
		b.kind, b.data = blockRedacted, cb.Data
		d.emit(llm.StreamEvent{Kind: llm.EventReasoningStart})
	case "tool_use":
		b.kind = blockToolUse
		d.emit(llm.StreamEvent{Kind: llm.EventToolCallStart, ToolCall: &llm.ToolCall{ID: cb.ID, Name: cb.Name}})
	default:
		if isServerBlock(cb.Type) {
			// No events: the loop has nothing to run, and the part
			// is in the final response.
			b.kind, b.server = blockServer, cb
		}
	}
	return nil
}

func (d *streamDecoder) blockDelta() error {
	b, err := d.block(d.ev.Index, "content_block_delta")
	if err != nil || b.kind == blockUnknown {
		return err
	}
	delta := &d.ev.Delta
	switch delta.Type {
	case "text_delta":
		d.appendText(b, delta.Text, llm.EventTextDelta)
	case "thinking_delta":
		d.appendText(b, delta.Thinking, llm.EventReasoningDelta)
	case "signature_delta":
		b.signature.WriteString(delta.Signature)
	case "input_json_delta":
		if delta.PartialJSON != "" {
			b.args = append(b.args, delta.PartialJSON...)
			if b.kind == blockToolUse {
				d.emit(llm.StreamEvent{Kind: llm.EventToolCallDelta, Delta: delta.PartialJSON})
			}
		}
	}
	return nil
}

func (d *streamDecoder) appendText(b *blockState, s string, kind llm.StreamEventKind) {
	if s != "" {
		b.text.WriteString(s)
		d.emit(llm.StreamEvent{Kind: kind, Delta: s})
	}
}

func (d *streamDecoder) block(i int, event string) (*blockState, error) {
	if i < 0 || i >= len(d.blocks) || d.blocks[i] == nil {
		return nil, invalidResponse(fmt.Sprintf("%s for index %d before its content_block_start", event, i), nil)
	}
	return d.blocks[i], nil
}

func (d *streamDecoder) blockStop(i int) error {
	b, err := d.block(i, "content_block_stop")
	if err != nil || b.stopped {
		return err
	}
	b.stopped = true
	switch b.kind {
	case blockText:
		b.part = llm.ContentPart{Kind: llm.KindText, Text: b.text.String()}
		d.emit(llm.StreamEvent{Kind: llm.EventTextEnd})
	case blockThinking:
		r := &llm.Reasoning{Text: b.text.String(), Signature: b.signature.String()}
		raw, _ := json.Marshal(thinkingBlock{Type: "thinking", Thinking: r.Text, Signature: r.Signature})
		b.part = reasoningPart(r, raw)
		d.emit(llm.StreamEvent{Kind: llm.EventReasoningEnd})
	case blockRedacted:
		raw, _ := json.Marshal(redactedThinkingBlock{Type: "redacted_thinking", Data: b.data})
		b.part = reasoningPart(&llm.Reasoning{Redacted: true, Data: b.data}, raw)
		d.emit(llm.StreamEvent{Kind: llm.EventReasoningEnd})
	case blockToolUse:
		call := newToolCall(b.id, b.name, b.args)
		b.part = llm.ContentPart{Kind: llm.KindToolCall, ToolCall: call}
		d.emit(llm.StreamEvent{Kind: llm.EventToolCallEnd, ToolCall: call})
	case blockServer:
		b.part = streamedServerPart(b.server, b.args)
	}
	return nil
}

func (d *streamDecoder) emit(ev llm.StreamEvent) { d.out = append(d.out, ev) }

// finish closes blocks left open and returns the assembled response.
func (d *streamDecoder) finish() *llm.Response {
	d.out = d.out[:0]
	resp := d.resp
	resp.Message = llm.Message{Role: llm.RoleAssistant, Content: make([]llm.ContentPart, 0, len(d.blocks))}
	for i, b := range d.blocks {
		if b == nil {
			continue
		}
		_ = d.blockStop(i)
		if b.kind != blockUnknown {
			resp.Message.Content = append(resp.Message.Content, b.part)
		}
	}
	resp.FinishReason = finishReason(d.stopReason)
	resp.Usage = convertUsage(d.usage)
	return &resp
}

// streamedServerPart is a streamed server tool block as content: a use
// whose input arrived as input_json_delta gets that input in its JSON.
func streamedServerPart(cb *wireBlockIn, args []byte) llm.ContentPart {
	if len(args) > 0 && json.Valid(args) && cb.Type == "server_tool_use" {
		var m map[string]json.RawMessage
		if json.Unmarshal(cb.Raw, &m) == nil {
			m["input"] = json.RawMessage(args)
			if raw, err := json.Marshal(m); err == nil {
				cb.Raw, cb.Input = raw, json.RawMessage(args)
			}
		}
	}
	return serverPart(cb)
}
