package openai

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/agentfleet/agentfleet/llm"
)

// wireRequest is the body of POST /responses.
type wireRequest struct {
	Model           string         `json:"model"`
	Input           []any          `json:"input"`
	Tools           []wireTool     `json:"tools,omitempty"`
	ToolChoice      any            `json:"tool_choice,omitempty"`
	Reasoning       *wireReasoning `json:"reasoning,omitempty"`
	MaxOutputTokens int            `json:"max_output_tokens,omitempty"`
	Temperature     *float64       `json:"temperature,omitempty"`
	Store           bool           `json:"store"`
	Include         []string       `json:"include,omitempty"`
	Stream          bool           `json:"stream,omitempty"`
	PromptCacheKey  string         `json:"prompt_cache_key,omitempty"`
	Text            *wireText      `json:"text,omitempty"`
	// Truncation is "auto" when the computer use tool is offered, as the
	// API asks of computer use requests.
	Truncation string `json:"truncation,omitempty"`
}

// wireText is the "text" object; its format asks for JSON matching a schema.
type wireText struct {
	Format wireFormat `json:"format"`
}

type wireFormat struct {
	Type        string          `json:"type"` // json_schema
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
	Strict      bool            `json:"strict"`
}

type wireTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
	Strict      bool            `json:"strict"`
	// Params are a built-in tool's own parameters (web_search:
	// search_context_size, user_location, filters), sent beside its type
	// instead of the function fields.
	Params map[string]any `json:"-"`
}

// MarshalJSON writes a function tool as its fields and a built-in tool
// (any type but "function") as its type and parameters.
func (t wireTool) MarshalJSON() ([]byte, error) {
	if t.Type == "function" {
		type plain wireTool
		return json.Marshal(plain(t))
	}
	m := make(map[string]any, len(t.Params)+1)
	maps.Copy(m, t.Params)
	m["type"] = t.Type
	return json.Marshal(m)
}

type wireReasoning struct {
	Effort  string `json:"effort,omitempty"`
	Summary string `json:"summary,omitempty"`
}

// Input items. Messages use the short form {role, content}; the others are
// typed items.
type wireMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"` // string for developer messages, else []wireContent
}

type wireContent struct {
	Type     string `json:"type"` // input_text, input_image, output_text
	Text     string `json:"text,omitempty"`
	ImageURL string `json:"image_url,omitempty"`
}

type wireFunctionCall struct {
	Type      string `json:"type"` // function_call
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireFunctionOutput struct {
	Type   string `json:"type"` // function_call_output
	CallID string `json:"call_id"`
	Output string `json:"output"`
}

type wireReasoningItem struct {
	Type             string          `json:"type"` // reasoning
	ID               string          `json:"id,omitempty"`
	Summary          json.RawMessage `json:"summary"`
	EncryptedContent string          `json:"encrypted_content,omitempty"`
}

// options are the ProviderOptions["openai"] keys this adapter reads.
type options struct {
	store            bool
	reasoningSummary string
	include          []string
}

func readOptions(po llm.ProviderOptions) (options, error) {
	var o options
	m := po[ProviderName]
	if v, ok := m["store"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			return o, optionError("store", "a boolean", v)
		}
		o.store = b
	}
	if v, ok := m["reasoning_summary"]; ok {
		s, isString := v.(string)
		if !isString {
			return o, optionError("reasoning_summary", "a string (auto, concise or detailed)", v)
		}
		o.reasoningSummary = s
	}
	if v, ok := m["include"]; ok {
		switch x := v.(type) {
		case []string:
			o.include = x
		case []any:
			for _, e := range x {
				s, isString := e.(string)
				if !isString {
					return o, optionError("include", "a list of strings", v)
				}
				o.include = append(o.include, s)
			}
		default:
			return o, optionError("include", "a list of strings", v)
		}
	}
	return o, nil
}

func optionError(key, want string, got any) error {
	return &llm.Error{Kind: llm.ErrInvalidRequest, Provider: ProviderName,
		Message: fmt.Sprintf("ProviderOptions[\"openai\"][%q] must be %s, got %T", key, want, got)}
}

// encryptedReasoning is the include value that makes a stateless (store:
// false) conversation keep its reasoning across turns.
const encryptedReasoning = "reasoning.encrypted_content"

// BuildRequest encodes req as a Responses API body. Reasoning items carrying
// encrypted content are echoed back; with store false, item ids are not sent
// (the server keeps nothing to look them up by).
func BuildRequest(req llm.Request, stream bool) ([]byte, error) {
	if req.Model == "" {
		return nil, &llm.Error{Kind: llm.ErrInvalidRequest, Provider: ProviderName, Message: "Request.Model is empty; name the model to call (for example gpt-5)"}
	}
	opts, err := readOptions(req.ProviderOptions)
	if err != nil {
		return nil, err
	}
	if err := llm.CheckToolChoice(req); err != nil {
		return nil, &llm.Error{Kind: llm.ErrInvalidRequest, Provider: ProviderName, Message: err.Error()}
	}
	w := wireRequest{Model: req.Model, MaxOutputTokens: req.MaxOutputTokens, Temperature: req.Temperature,
		Store: opts.store, Stream: stream, Include: opts.include, PromptCacheKey: req.CacheKey}
	defs, err := llm.ToolsFor(req, ProviderName)
	if err != nil {
		return nil, err
	}
	computer := computerToolName(defs)
	w.Input, err = buildInput(req.Messages, opts.store, &computerInput{name: computer})
	if err != nil {
		return nil, err
	}
	if computer != "" {
		w.Truncation = "auto"
	}
	for _, t := range defs {
		if t.Provider != nil {
			if t.Provider.Type == ComputerUseType {
				if err := checkComputerTool(t); err != nil {
					return nil, err
				}
			}
			w.Tools = append(w.Tools, wireTool{Type: t.Provider.Type, Params: t.Provider.Params})
			continue
		}
		w.Tools = append(w.Tools, wireTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: t.Parameters})
	}
	if len(w.Tools) > 0 {
		w.ToolChoice = toolChoice(req.ToolChoice)
	}
	if f := req.ResponseFormat; f != nil {
		if err := f.Check(); err != nil {
			return nil, &llm.Error{Kind: llm.ErrInvalidRequest, Provider: ProviderName, Message: err.Error()}
		}
		w.Text = &wireText{Format: wireFormat{Type: "json_schema", Name: f.Name, Description: f.Description, Schema: f.Schema, Strict: f.Strict}}
	}
	if req.ReasoningEffort != "" || opts.reasoningSummary != "" {
		w.Reasoning = &wireReasoning{Effort: req.ReasoningEffort, Summary: opts.reasoningSummary}
		if !opts.store && !contains(w.Include, encryptedReasoning) {
			w.Include = append(w.Include, encryptedReasoning)
		}
	}
	return json.Marshal(w)
}

func contains(list []string, s string) bool {
	return slices.Contains(list, s)
}

func toolChoice(c llm.ToolChoice) any {
	switch c.Mode {
	case llm.ToolChoiceNone:
		return "none"
	case llm.ToolChoiceRequired:
		return "required"
	case llm.ToolChoiceNamed:
		return map[string]string{"type": "function", "name": c.Name}
	}
	return "auto"
}

// buildInput turns the conversation into input items, in order; cu
// tracks the computer calls among them (see computer.go).
func buildInput(msgs []llm.Message, store bool, cu *computerInput) ([]any, error) {
	items := make([]any, 0, len(msgs)+4)
	var err error
	for i, m := range msgs {
		switch m.Role {
		case llm.RoleSystem:
			items = append(items, wireMessage{Role: "developer", Content: m.Text()})
		case llm.RoleUser:
			items = append(items, wireMessage{Role: "user", Content: userContent(m, cu)})
		case llm.RoleAssistant:
			if items, err = appendAssistant(items, m, store, cu); err != nil {
				return nil, err
			}
		case llm.RoleTool:
			if items, err = appendResults(items, m, cu); err != nil {
				return nil, err
			}
		default:
			return nil, &llm.Error{Kind: llm.ErrInvalidRequest, Provider: ProviderName,
				Message: fmt.Sprintf("Messages[%d].Role %q is not one of system, user, assistant, tool", i, m.Role)}
		}
	}
	return items, nil
}

// appendResults adds a tool message's results: function_call_output
// items, and computer_call_output for the computer calls.
func appendResults(items []any, m llm.Message, cu *computerInput) ([]any, error) {
	for _, p := range m.Content {
		tr := p.ToolResult
		if p.Kind != llm.KindToolResult || tr == nil {
			continue
		}
		if _, ok := cu.pending[tr.ToolCallID]; ok {
			out, err := cu.output(tr)
			if err != nil {
				return nil, err
			}
			items = append(items, out...)
			continue
		}
		items = append(items, wireFunctionOutput{Type: "function_call_output", CallID: tr.ToolCallID, Output: tr.Content})
	}
	return items, nil
}

func userContent(m llm.Message, cu *computerInput) []wireContent {
	parts := make([]wireContent, 0, len(m.Content))
	for _, p := range m.Content {
		switch p.Kind {
		case llm.KindText:
			parts = append(parts, wireContent{Type: "input_text", Text: p.Text})
		case llm.KindImage:
			if p.Image != nil {
				parts = append(parts, wireContent{Type: "input_image", ImageURL: p.Image.URLOrData()})
				cu.seen(p.Image)
			}
		}
	}
	return parts
}

// appendAssistant adds an assistant message's parts as items: runs of text
// become one message, reasoning becomes a reasoning item (only when this
// adapter produced it), tool calls become function_call items, computer
// calls computer_call items.
func appendAssistant(items []any, m llm.Message, store bool, cu *computerInput) ([]any, error) {
	var text []wireContent
	flush := func() {
		if len(text) > 0 {
			items = append(items, wireMessage{Role: "assistant", Content: text})
			text = nil
		}
	}
	for _, p := range m.Content {
		switch p.Kind {
		case llm.KindText:
			text = append(text, wireContent{Type: "output_text", Text: p.Text})
		case llm.KindReasoning:
			if item, ok := reasoningItem(p, store); ok {
				flush()
				items = append(items, item)
			}
		case llm.KindToolCall:
			if isComputerCall(p, cu.name) {
				flush()
				item, err := cu.call(p.ToolCall)
				if err != nil {
					return nil, err
				}
				items = append(items, item)
			} else if p.ToolCall != nil {
				flush()
				items = append(items, wireFunctionCall{Type: "function_call", CallID: p.ToolCall.ID, Name: p.ToolCall.Name, Arguments: string(p.ToolCall.Arguments)})
			}
		}
	}
	flush()
	return items, nil
}

// reasoningItem echoes a reasoning part this adapter produced. Without
// store, only items with encrypted content can be sent back; others are
// dropped (the server could not resolve them).
func reasoningItem(p llm.ContentPart, store bool) (wireReasoningItem, bool) {
	if p.Provider != ProviderName || p.Reasoning == nil {
		return wireReasoningItem{}, false
	}
	item := wireReasoningItem{Type: "reasoning", EncryptedContent: p.Reasoning.Signature, Summary: json.RawMessage("[]")}
	if len(p.Raw) > 0 {
		var raw struct {
			Summary json.RawMessage `json:"summary"`
		}
		if json.Unmarshal(p.Raw, &raw) == nil && len(raw.Summary) > 0 && string(raw.Summary) != "null" {
			item.Summary = raw.Summary
		}
	}
	if store {
		item.ID = p.Reasoning.ID
		return item, item.ID != ""
	}
	return item, item.EncryptedContent != ""
}
