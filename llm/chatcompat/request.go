package chatcompat

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// wireRequest is the body of POST /chat/completions.
type wireRequest struct {
	Model               string         `json:"model"`
	Messages            []wireMessage  `json:"messages"`
	Tools               []wireTool     `json:"tools,omitempty"`
	ToolChoice          any            `json:"tool_choice,omitempty"`
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
	Reasoning           *wireEffort    `json:"reasoning,omitempty"` // OpenRouter
	Thinking            *wireThinking  `json:"thinking,omitempty"`  // Z.ai
	ParallelToolCalls   *bool          `json:"parallel_tool_calls,omitempty"`
	MaxTokens           int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
	Temperature         *float64       `json:"temperature,omitempty"`
	Stream              bool           `json:"stream,omitempty"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
	ResponseFormat      *wireFormat    `json:"response_format,omitempty"`
}

// wireFormat is response_format asking for JSON matching a schema.
type wireFormat struct {
	Type       string          `json:"type"` // json_schema, json_object
	JSONSchema *wireJSONSchema `json:"json_schema,omitempty"`
}

type wireJSONSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Strict      bool            `json:"strict"`
}

type wireEffort struct {
	Effort string `json:"effort"`
}

type wireThinking struct {
	Type string `json:"type"` // enabled, disabled
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
}

// wireMessage is one chat message. Content is a string, an array of parts
// (user messages with images) or absent (an assistant message that only
// calls tools).
type wireMessage struct {
	Role             string         `json:"role"`
	Content          any            `json:"content,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string         `json:"tool_call_id,omitempty"`
}

type wirePart struct {
	Type     string        `json:"type"` // text, image_url
	Text     string        `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL string `json:"url"`
}

type wireToolCall struct {
	Index    *int   `json:"index,omitempty"` // streamed deltas only
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// options are the ProviderOptions["chatcompat"] keys this adapter reads.
type options struct {
	maxTokensField string // max_tokens or max_completion_tokens
	echoReasoning  bool
	parallel       *bool // parallel_tool_calls, nil: not sent
}

func readOptions(req llm.Request, d Dialect) (options, error) {
	o := options{maxTokensField: d.MaxTokensField, echoReasoning: d.EchoReasoning}
	if o.maxTokensField == "" {
		o.maxTokensField = defaultMaxTokensField(req.Model)
	}
	m := req.ProviderOptions[ProviderName]
	if v, ok := m["parallel_tool_calls"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			return o, optionError("parallel_tool_calls", "a boolean", v)
		}
		if d.ParallelToolCalls {
			o.parallel = &b
		}
	}
	if v, ok := m["max_tokens_field"]; ok {
		s, _ := v.(string)
		if s != "max_tokens" && s != "max_completion_tokens" {
			return o, optionError("max_tokens_field", "\"max_tokens\" or \"max_completion_tokens\"", v)
		}
		o.maxTokensField = s
	}
	if v, ok := m["echo_reasoning"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			return o, optionError("echo_reasoning", "a boolean", v)
		}
		o.echoReasoning = b
	}
	return o, nil
}

// defaultMaxTokensField: older OpenAI chat models take max_tokens; reasoning
// models and current servers take max_completion_tokens.
func defaultMaxTokensField(model string) string {
	for _, p := range []string{"gpt-4", "gpt-3.5"} {
		if strings.HasPrefix(model, p) {
			return "max_tokens"
		}
	}
	return "max_completion_tokens"
}

func optionError(key, want string, got any) error {
	return &llm.Error{Kind: llm.ErrInvalidRequest, Provider: ProviderName,
		Message: fmt.Sprintf("ProviderOptions[\"chatcompat\"][%q] must be %s, got %v", key, want, got)}
}

// BuildRequest encodes req as a Chat Completions body in the Generic
// dialect.
func BuildRequest(req llm.Request, stream bool) ([]byte, error) {
	return BuildDialectRequest(Generic, req, stream)
}

func invalid(msg string) *llm.Error {
	return &llm.Error{Kind: llm.ErrInvalidRequest, Provider: ProviderName, Message: msg}
}

// BuildDialectRequest encodes req as a Chat Completions body for a host
// speaking dialect d (see Dialect for what each field changes).
func BuildDialectRequest(d Dialect, req llm.Request, stream bool) ([]byte, error) {
	if req.Model == "" {
		return nil, invalid("Request.Model is empty; name the model the server serves")
	}
	opts, err := readOptions(req, d)
	if err != nil {
		return nil, err
	}
	if req, err = answerForm(d, req); err != nil {
		return nil, err
	}
	if err := llm.CheckToolChoice(req); err != nil {
		return nil, invalid(err.Error())
	}
	w := wireRequest{Model: req.Model, Temperature: req.Temperature, Stream: stream, ParallelToolCalls: opts.parallel}
	if opts.maxTokensField == "max_tokens" {
		w.MaxTokens = req.MaxOutputTokens
	} else {
		w.MaxCompletionTokens = req.MaxOutputTokens
	}
	setReasoning(&w, d, req.ReasoningEffort)
	if stream && d.StreamUsage {
		w.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	if w.Messages, err = buildMessages(req.Messages, opts); err != nil {
		return nil, err
	}
	if err := llm.NoProviderTools(req, ProviderName, "Chat Completions"); err != nil {
		return nil, err
	}
	for _, t := range req.Tools {
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireFunction{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
	}
	if len(w.Tools) > 0 {
		if m := req.ToolChoice.Mode; !d.ForcedToolChoice && (m == llm.ToolChoiceRequired || m == llm.ToolChoiceNamed) {
			return nil, invalid(fmt.Sprintf("dialect %s does not honour tool choice %q (only auto and none); use auto, or override forced_tool_choice if the host now does", d.Name, m))
		}
		w.ToolChoice = toolChoice(req.ToolChoice)
	}
	if f := req.ResponseFormat; f != nil {
		if d.ResponseFormat == "json_object" {
			w.ResponseFormat = &wireFormat{Type: "json_object"}
		} else {
			w.ResponseFormat = &wireFormat{Type: "json_schema", JSONSchema: &wireJSONSchema{Name: f.Name, Description: f.Description, Schema: f.Schema, Strict: f.Strict}}
		}
	}
	return json.Marshal(w)
}

// answerForm prepares a request with a ResponseFormat for the dialect:
// checked; as a forced tool call when the dialect answers that way; with a
// first system message giving the schema in JSON mode, where the host
// checks only that the answer is JSON.
func answerForm(d Dialect, req llm.Request) (llm.Request, error) {
	f := req.ResponseFormat
	if f == nil {
		return req, nil
	}
	if err := f.Check(); err != nil {
		return req, invalid(err.Error())
	}
	switch d.ResponseFormat {
	case "tool":
		out, err := llm.AsAnswerTool(req)
		if err != nil {
			return req, invalid(err.Error())
		}
		out.ResponseFormat = nil // carried by the tool now
		return out, nil
	case "json_object":
		note := llm.SystemMessage("Answer with one JSON object, and nothing else, that matches this JSON Schema:\n" + string(f.Schema))
		req.Messages = append([]llm.Message{note}, req.Messages...)
	}
	return req, nil
}

// setReasoning puts the effort where the dialect takes it.
func setReasoning(w *wireRequest, d Dialect, effort string) {
	if effort == "" {
		return
	}
	switch d.ReasoningField {
	case "reasoning_effort":
		w.ReasoningEffort = effort
	case "reasoning.effort":
		w.Reasoning = &wireEffort{Effort: effort}
	case "thinking.type":
		w.Thinking = &wireThinking{Type: "enabled"}
		if effort == "none" {
			w.Thinking.Type = "disabled"
		}
	}
}

func toolChoice(c llm.ToolChoice) any {
	switch c.Mode {
	case llm.ToolChoiceNone:
		return "none"
	case llm.ToolChoiceRequired:
		return "required"
	case llm.ToolChoiceNamed:
		return map[string]any{"type": "function", "function": map[string]string{"name": c.Name}}
	}
	return "auto"
}

func buildMessages(msgs []llm.Message, opts options) ([]wireMessage, error) {
	out := make([]wireMessage, 0, len(msgs)+2)
	for i, m := range msgs {
		switch m.Role {
		case llm.RoleSystem:
			out = append(out, wireMessage{Role: "system", Content: m.Text()})
		case llm.RoleUser:
			out = append(out, wireMessage{Role: "user", Content: userContent(m)})
		case llm.RoleAssistant:
			out = append(out, assistantMessage(m, opts))
		case llm.RoleTool:
			for _, p := range m.Content {
				if p.Kind == llm.KindToolResult && p.ToolResult != nil {
					out = append(out, wireMessage{Role: "tool", Content: p.ToolResult.Content, ToolCallID: p.ToolResult.ToolCallID})
				}
			}
		default:
			return nil, &llm.Error{Kind: llm.ErrInvalidRequest, Provider: ProviderName,
				Message: fmt.Sprintf("Messages[%d].Role %q is not one of system, user, assistant, tool", i, m.Role)}
		}
	}
	return out, nil
}

// userContent is a plain string for text-only messages (what every server
// accepts) and an array of parts when there are images.
func userContent(m llm.Message) any {
	hasImage := false
	for _, p := range m.Content {
		hasImage = hasImage || p.Kind == llm.KindImage && p.Image != nil
	}
	if !hasImage {
		return m.Text()
	}
	parts := make([]wirePart, 0, len(m.Content))
	for _, p := range m.Content {
		switch {
		case p.Kind == llm.KindText:
			parts = append(parts, wirePart{Type: "text", Text: p.Text})
		case p.Kind == llm.KindImage && p.Image != nil:
			parts = append(parts, wirePart{Type: "image_url", ImageURL: &wireImageURL{URL: p.Image.URLOrData()}})
		}
	}
	return parts
}

// assistantMessage folds an assistant message into one chat message: text,
// tool calls and (when echoing) reasoning_content from this adapter.
func assistantMessage(m llm.Message, opts options) wireMessage {
	w := wireMessage{Role: "assistant"}
	var reasoning strings.Builder
	for _, p := range m.Content {
		switch {
		case p.Kind == llm.KindToolCall && p.ToolCall != nil:
			tc := wireToolCall{ID: p.ToolCall.ID, Type: "function"}
			tc.Function.Name, tc.Function.Arguments = p.ToolCall.Name, string(p.ToolCall.Arguments)
			w.ToolCalls = append(w.ToolCalls, tc)
		case p.Kind == llm.KindReasoning && p.Reasoning != nil && p.Provider == ProviderName && opts.echoReasoning:
			reasoning.WriteString(p.Reasoning.Text)
		}
	}
	if text := m.Text(); text != "" {
		w.Content = text
	}
	w.ReasoningContent = reasoning.String()
	return w
}
