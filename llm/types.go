package llm

import (
	"context"
	"encoding/json"
	"iter"
	"strings"
)

// Client is the one interface every provider adapter implements.
//
// Complete sends one request and returns the whole response. Stream sends the
// same request and yields events as they arrive; the sequence always ends
// with exactly one terminal element: either an event of kind EventFinish whose
// Response is the assembled final response, or a non-nil error. Breaking out
// of the loop early cancels the request and releases its connection.
type Client interface {
	Complete(ctx context.Context, req Request) (*Response, error)
	Stream(ctx context.Context, req Request) iter.Seq2[StreamEvent, error]
}

// Role says who authored a message.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	// RoleTool carries tool results back to the model.
	RoleTool Role = "tool"
)

// ContentKind tells which field of a ContentPart is set.
type ContentKind string

const (
	KindText       ContentKind = "text"
	KindImage      ContentKind = "image"
	KindToolCall   ContentKind = "tool_call"
	KindToolResult ContentKind = "tool_result"
	KindReasoning  ContentKind = "reasoning"
	// KindServerTool is a tool the provider ran itself (web search, code
	// execution): its use or its result, content of the answer rather than
	// a call for the loop to run (see ServerTool).
	KindServerTool ContentKind = "server_tool"
)

// ContentPart is one piece of a message. Exactly the field named by Kind is
// meaningful. Raw, when set, is the provider's own JSON for this part, kept so
// that the adapter that produced it can send it back unchanged (encrypted
// reasoning, thinking signatures, Gemini thoughtSignature). Adapters ignore
// Raw written by another provider (see Provider).
type ContentPart struct {
	Kind       ContentKind     `json:"kind"`
	Text       string          `json:"text,omitempty"`
	Image      *Image          `json:"image,omitempty"`
	ToolCall   *ToolCall       `json:"tool_call,omitempty"`
	ToolResult *ToolResult     `json:"tool_result,omitempty"`
	Reasoning  *Reasoning      `json:"reasoning,omitempty"`
	ServerTool *ServerTool     `json:"server_tool,omitempty"`
	Signature  string          `json:"signature,omitempty"` // Gemini thoughtSignature on text parts
	Provider   string          `json:"provider,omitempty"`  // adapter that wrote Raw
	Raw        json.RawMessage `json:"raw,omitempty"`
}

// Image is inline image data or a URL.
type Image struct {
	MediaType string `json:"media_type,omitempty"` // e.g. image/png
	Data      []byte `json:"data,omitempty"`
	URL       string `json:"url,omitempty"`
}

// Reasoning is the model's thinking. Signature is the opaque token a provider
// requires back to verify it (Anthropic signature, OpenAI encrypted_content).
// Redacted thinking has Redacted set and its opaque payload in Data.
type Reasoning struct {
	Text      string `json:"text,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  bool   `json:"redacted,omitempty"`
	Data      string `json:"data,omitempty"`
	ID        string `json:"id,omitempty"` // provider item id (OpenAI rs_...)
}

// ToolCall is a model's request to run a tool. Arguments hold the raw JSON
// text as the model produced it; when it does not parse, ArgumentsError says
// why and the call is still delivered so the agent can answer with an error
// result instead of failing.
type ToolCall struct {
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Arguments      json.RawMessage `json:"arguments"`
	ArgumentsError string          `json:"arguments_error,omitempty"`
	ItemID         string          `json:"item_id,omitempty"`   // provider item id (OpenAI fc_...)
	Signature      string          `json:"signature,omitempty"` // Gemini thoughtSignature on the functionCall part
}

// ToolResult is the outcome of one tool call, sent back to the model.
type ToolResult struct {
	ToolCallID string  `json:"tool_call_id"`
	Name       string  `json:"name,omitempty"` // Gemini functionResponse needs the name
	Content    string  `json:"content"`
	IsError    bool    `json:"is_error,omitempty"`
	Images     []Image `json:"images,omitempty"`
}

// Message is one entry of the conversation sent to the model.
type Message struct {
	Role    Role          `json:"role"`
	Content []ContentPart `json:"content"`
}

// Text concatenates the message's text parts.
func (m Message) Text() string {
	var b strings.Builder
	for _, p := range m.Content {
		if p.Kind == KindText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// ToolCalls returns the message's tool calls in order.
func (m Message) ToolCalls() []ToolCall {
	var calls []ToolCall
	for _, p := range m.Content {
		if p.Kind == KindToolCall && p.ToolCall != nil {
			calls = append(calls, *p.ToolCall)
		}
	}
	return calls
}

// Reasoning concatenates the message's reasoning text.
func (m Message) Reasoning() string {
	var b strings.Builder
	for _, p := range m.Content {
		if p.Kind == KindReasoning && p.Reasoning != nil {
			b.WriteString(p.Reasoning.Text)
		}
	}
	return b.String()
}

// SystemMessage, UserMessage and AssistantMessage build text messages.
func SystemMessage(text string) Message { return textMessage(RoleSystem, text) }

// UserMessage builds a user text message.
func UserMessage(text string) Message { return textMessage(RoleUser, text) }

// AssistantMessage builds an assistant text message.
func AssistantMessage(text string) Message { return textMessage(RoleAssistant, text) }

// ToolResultMessage builds the message that carries tool results.
func ToolResultMessage(results ...ToolResult) Message {
	m := Message{Role: RoleTool}
	for i := range results {
		m.Content = append(m.Content, ContentPart{Kind: KindToolResult, ToolResult: &results[i]})
	}
	return m
}

func textMessage(role Role, text string) Message {
	return Message{Role: role, Content: []ContentPart{{Kind: KindText, Text: text}}}
}

// ToolDefinition describes a tool to the model. Parameters is a JSON Schema
// whose root is an object.
type ToolDefinition struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
	// Provider, when set, makes this one of a provider's own tools (web
	// search, computer use, a text editor...), sent in the provider's
	// shape with its parameters instead of Description and Parameters;
	// see ProviderTool.
	Provider *ProviderTool `json:"provider_tool,omitempty"`
	// Cache asks for a prompt cache breakpoint after this definition
	// (Anthropic's cache_control on the tool), so the tools up to it are
	// cached as a prefix of their own. Providers that cache by prefix on
	// their own ignore it.
	Cache bool `json:"cache,omitempty"`
}

// ToolChoiceMode says whether and which tools the model may call.
type ToolChoiceMode string

const (
	ToolChoiceAuto     ToolChoiceMode = "auto" // the zero value means auto
	ToolChoiceNone     ToolChoiceMode = "none"
	ToolChoiceRequired ToolChoiceMode = "required"
	ToolChoiceNamed    ToolChoiceMode = "named" // exactly the tool in Name
)

// ToolChoice constrains tool use.
type ToolChoice struct {
	Mode ToolChoiceMode `json:"mode,omitempty"`
	Name string         `json:"name,omitempty"`
}

// ProviderOptions carries settings only one provider understands, keyed by
// provider name ("openai", "anthropic", "gemini", "chatcompat"). Each adapter
// reads its own key and ignores the others. Documented keys:
//
//	anthropic: beta_headers []string, thinking_budget int, tools []ToolDefinition
//	openai:    store bool, reasoning_summary string, include []string, tools []ToolDefinition
//	gemini:    safety_settings []object, thinking_budget int, include_thoughts bool, tools []ToolDefinition
//	chatcompat: max_tokens_field string, echo_reasoning bool, parallel_tool_calls bool
//
// tools are provider tools and per-tool cache marks merged into
// Request.Tools by name (see ToolsFor and ProviderTool).
type ProviderOptions map[string]map[string]any

// Request is one call to a model. System messages may appear anywhere in
// Messages; adapters move them where their wire format wants them.
type Request struct {
	Model           string           `json:"model"`
	Messages        []Message        `json:"messages"`
	Tools           []ToolDefinition `json:"tools,omitempty"`
	ToolChoice      ToolChoice       `json:"tool_choice"`
	ReasoningEffort string           `json:"reasoning_effort,omitempty"` // "", low, medium, high (some providers: minimal, xhigh)
	MaxOutputTokens int              `json:"max_output_tokens,omitempty"`
	Temperature     *float64         `json:"temperature,omitempty"`
	ProviderOptions ProviderOptions  `json:"provider_options,omitempty"`
	// ResponseFormat, when set, asks for an answer that is one JSON object
	// matching its schema (see ResponseFormat); nil asks for free text.
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`
	// CacheKey names the requests that share a prompt prefix, one key per
	// session, so a provider that routes by it (OpenAI's prompt_cache_key)
	// sends them to the machine holding that prefix. "" sends none; the
	// Anthropic adapter marks cache breakpoints instead and Gemini caches
	// implicitly, so both ignore it.
	CacheKey string `json:"cache_key,omitempty"`
}

// FinishReason says why the model stopped. Raw keeps the provider's own word.
type FinishReason struct {
	Reason FinishKind `json:"reason"`
	Raw    string     `json:"raw,omitempty"`
}

// FinishKind is the unified stop reason.
type FinishKind string

const (
	FinishStop          FinishKind = "stop"
	FinishLength        FinishKind = "length"
	FinishToolCalls     FinishKind = "tool_calls"
	FinishContentFilter FinishKind = "content_filter"
	FinishContextLength FinishKind = "context_length"
	FinishError         FinishKind = "error"
	FinishOther         FinishKind = "other"
	// FinishPaused: the provider paused a long turn of its own (server)
	// tools (Anthropic's pause_turn); sending the conversation back lets
	// the model go on with the same turn.
	FinishPaused FinishKind = "paused"
)

// Usage counts tokens. InputTokens includes cached tokens where the provider
// reports them that way; CacheReadTokens and CacheWriteTokens break them out.
type Usage struct {
	InputTokens      int `json:"input_tokens"`
	OutputTokens     int `json:"output_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
	CacheReadTokens  int `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
}

// Add returns the field-by-field sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + v.InputTokens,
		OutputTokens:     u.OutputTokens + v.OutputTokens,
		ReasoningTokens:  u.ReasoningTokens + v.ReasoningTokens,
		CacheReadTokens:  u.CacheReadTokens + v.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
	}
}

// Total is input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Response is a model's complete answer. Message holds every part in the order
// the provider produced it, including the raw items needed to send it back
// exactly; Text, ToolCalls and Reasoning are views of it.
type Response struct {
	ID           string       `json:"id,omitempty"`
	Model        string       `json:"model,omitempty"`
	Provider     string       `json:"provider,omitempty"`
	Message      Message      `json:"message"`
	FinishReason FinishReason `json:"finish_reason"`
	Usage        Usage        `json:"usage"`
}

// Text is the concatenated assistant text.
func (r *Response) Text() string { return r.Message.Text() }

// ToolCalls are the tool calls in the order the model made them.
func (r *Response) ToolCalls() []ToolCall { return r.Message.ToolCalls() }

// Reasoning is the concatenated reasoning text.
func (r *Response) Reasoning() string { return r.Message.Reasoning() }

// StreamEventKind names a streaming event.
type StreamEventKind string

const (
	EventTextStart      StreamEventKind = "text_start"
	EventTextDelta      StreamEventKind = "text_delta"
	EventTextEnd        StreamEventKind = "text_end"
	EventReasoningStart StreamEventKind = "reasoning_start"
	EventReasoningDelta StreamEventKind = "reasoning_delta"
	EventReasoningEnd   StreamEventKind = "reasoning_end"
	EventToolCallStart  StreamEventKind = "tool_call_start" // ToolCall has ID and Name
	EventToolCallDelta  StreamEventKind = "tool_call_delta" // Delta is an arguments fragment
	EventToolCallEnd    StreamEventKind = "tool_call_end"   // ToolCall is complete
	EventFinish         StreamEventKind = "finish"          // Response is the final response
)

// StreamEvent is one element of a stream. Delta carries text, reasoning or
// argument fragments; ToolCall is set on tool-call events; Response only on
// EventFinish.
type StreamEvent struct {
	Kind     StreamEventKind
	Delta    string
	ToolCall *ToolCall
	Response *Response
}
