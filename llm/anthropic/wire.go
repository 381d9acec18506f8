package anthropic

import (
	"encoding/json"
	"maps"
)

// This file holds the Messages API wire types: what we send and what we read.

// wireRequest is the body of POST /v1/messages. It is three parts so the
// tools, the same on every request of a session, can be spliced in already
// encoded between the fields before and after them (see requestBody);
// encoding/json writes the same object either way.
type wireRequest struct {
	wireHead
	Tools []wireTool `json:"tools,omitempty"`
	wireTail
}

// wireHead holds the fields before "tools".
type wireHead struct {
	Model     string        `json:"model"`
	MaxTokens int           `json:"max_tokens"`
	System    []textBlock   `json:"system,omitempty"`
	Messages  []wireMessage `json:"messages"`
}

// wireTail holds the fields after "tools".
type wireTail struct {
	ToolChoice  *wireToolChoice `json:"tool_choice,omitempty"`
	Thinking    *wireThinking   `json:"thinking,omitempty"`
	Temperature *float64        `json:"temperature,omitempty"`
	Stream      bool            `json:"stream,omitempty"`
}

// wireMessage is one conversation turn. Each element of Content is one of
// the block types below or a json.RawMessage echoed back unchanged.
type wireMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type textBlock struct {
	Type         string        `json:"type"` // "text"
	Text         string        `json:"text"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type imageBlock struct {
	Type         string        `json:"type"` // "image"
	Source       imageSource   `json:"source"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type imageSource struct {
	Type      string `json:"type"` // "base64" or "url"
	MediaType string `json:"media_type,omitempty"`
	Data      string `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

type toolUseBlock struct {
	Type  string          `json:"type"` // "tool_use"
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type toolResultBlock struct {
	Type         string        `json:"type"` // "tool_result"
	ToolUseID    string        `json:"tool_use_id"`
	Content      []any         `json:"content"` // text and image blocks
	IsError      bool          `json:"is_error,omitempty"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type thinkingBlock struct {
	Type      string `json:"type"` // "thinking"
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

type redactedThinkingBlock struct {
	Type string `json:"type"` // "redacted_thinking"
	Data string `json:"data"`
}

type wireTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
	// Type and Params make this one of Anthropic's own tools, sent as
	// {type, name, ...params, cache_control} without a schema.
	Type   string         `json:"-"`
	Params map[string]any `json:"-"`
}

// MarshalJSON writes a custom tool as its fields and a provider tool as
// its type, name, parameters and cache mark.
func (t wireTool) MarshalJSON() ([]byte, error) {
	if t.Type == "" {
		type plain wireTool
		return json.Marshal(plain(t))
	}
	m := make(map[string]any, len(t.Params)+3)
	maps.Copy(m, t.Params)
	m["type"], m["name"] = t.Type, t.Name
	if t.CacheControl != nil {
		m["cache_control"] = t.CacheControl
	}
	return json.Marshal(m)
}

type wireToolChoice struct {
	Type                   string `json:"type"` // auto, any, tool, none
	Name                   string `json:"name,omitempty"`
	DisableParallelToolUse *bool  `json:"disable_parallel_tool_use,omitempty"`
}

type wireThinking struct {
	Type         string `json:"type"` // "enabled"
	BudgetTokens int    `json:"budget_tokens"`
}

// wireResponse is a whole Messages API response, and the message of a
// streaming message_start event.
type wireResponse struct {
	ID         string        `json:"id"`
	Model      string        `json:"model"`
	Content    []wireBlockIn `json:"content"`
	StopReason string        `json:"stop_reason"`
	Usage      wireUsage     `json:"usage"`
}

// wireBlockIn is any content block the API returns. Raw is the block's own
// JSON, filled by UnmarshalJSON so thinking blocks can be echoed exactly.
type wireBlockIn struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Raw       json.RawMessage `json:"-"`
}

func (b *wireBlockIn) UnmarshalJSON(data []byte) error {
	type plain wireBlockIn
	if err := json.Unmarshal(data, (*plain)(b)); err != nil {
		return err
	}
	if b.Type == "thinking" || b.Type == "redacted_thinking" || isServerBlock(b.Type) {
		b.Raw = append(json.RawMessage(nil), data...)
	}
	return nil
}

type wireUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// wireEvent is any streaming event; which fields are set depends on Type.
type wireEvent struct {
	Type         string        `json:"type"`
	Message      *wireResponse `json:"message"`
	Index        int           `json:"index"`
	ContentBlock *wireBlockIn  `json:"content_block"`
	Delta        wireDelta     `json:"delta"`
	Usage        *wireUsage    `json:"usage"`
	Error        *wireError    `json:"error"`
}

// wireDelta is the delta of content_block_delta and of message_delta.
type wireDelta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	PartialJSON string `json:"partial_json"`
	StopReason  string `json:"stop_reason"`
}

// wireErrorBody is the body of every error response and error event.
type wireErrorBody struct {
	Type      string    `json:"type"` // "error"
	Error     wireError `json:"error"`
	RequestID string    `json:"request_id"`
}

type wireError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}
