package chatcompat

import (
	"encoding/json"

	"github.com/agentfleet/agentfleet/llm"
)

// wireResponse is a chat.completion object, and also a streamed
// chat.completion.chunk (whose choices carry Delta instead of Message).
type wireResponse struct {
	ID      string         `json:"id"`
	Model   string         `json:"model"`
	Choices []wireChoice   `json:"choices"`
	Usage   *wireUsage     `json:"usage"`
	Error   *wireErrorBody `json:"error"`
}

// wireErrorBody is an error object inside a 200 body or a stream chunk.
type wireErrorBody struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

type wireChoice struct {
	Index        int          `json:"index"`
	Message      *wireContent `json:"message"`
	Delta        *wireContent `json:"delta"`
	FinishReason string       `json:"finish_reason"`
}

// wireContent is a message or a delta. Reasoning arrives as
// reasoning_content (llama.cpp, vLLM, DeepSeek) or reasoning (OpenRouter,
// Ollama).
type wireContent struct {
	Content          *string        `json:"content"`
	ReasoningContent string         `json:"reasoning_content"`
	Reasoning        string         `json:"reasoning"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

func (c *wireContent) reasoning() string {
	if c.ReasoningContent != "" {
		return c.ReasoningContent
	}
	return c.Reasoning
}

type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u *wireUsage) toUsage() llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	out := llm.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CacheReadTokens = u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		out.ReasoningTokens = u.CompletionTokensDetails.ReasoningTokens
	}
	return out
}

// ParseResponse decodes a whole chat.completion body. Only the first choice
// is used.
func ParseResponse(data []byte) (*llm.Response, *llm.Error) {
	var w wireResponse
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, invalidResponse("the response body is not a chat completion: "+err.Error(), data)
	}
	if w.Error != nil {
		return nil, bodyError(w.Error.Message, w.Error.Type, w.Error.Code)
	}
	if len(w.Choices) == 0 || w.Choices[0].Message == nil {
		return nil, invalidResponse("the response has no choices, so there is no answer to read", data)
	}
	ch := w.Choices[0]
	m := ch.Message
	text := ""
	if m.Content != nil {
		text = *m.Content
	}
	out := &llm.Response{ID: w.ID, Model: w.Model, Provider: ProviderName, Usage: w.Usage.toUsage()}
	out.Message = assemble(m.reasoning(), text, toolCalls(m.ToolCalls))
	out.FinishReason = finishReason(ch.FinishReason, len(m.ToolCalls) > 0)
	return out, nil
}

func toolCalls(calls []wireToolCall) []llm.ToolCall {
	out := make([]llm.ToolCall, 0, len(calls))
	for _, c := range calls {
		args, argErr := llm.ParseToolArguments(c.Function.Arguments)
		out = append(out, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: args, ArgumentsError: argErr})
	}
	return out
}

// assemble builds the assistant message: reasoning, then text, then tool
// calls, the order the model produced them in.
func assemble(reasoning, text string, calls []llm.ToolCall) llm.Message {
	m := llm.Message{Role: llm.RoleAssistant}
	if reasoning != "" {
		m.Content = append(m.Content, llm.ContentPart{Kind: llm.KindReasoning, Reasoning: &llm.Reasoning{Text: reasoning}, Provider: ProviderName})
	}
	if text != "" {
		m.Content = append(m.Content, llm.ContentPart{Kind: llm.KindText, Text: text})
	}
	for i := range calls {
		m.Content = append(m.Content, llm.ContentPart{Kind: llm.KindToolCall, ToolCall: &calls[i]})
	}
	return m
}

// finishReason maps finish_reason. Some servers (Ollama) say "stop" after
// calling tools; a message with tool calls finishes with FinishToolCalls.
func finishReason(raw string, calledTools bool) llm.FinishReason {
	kind := llm.FinishOther
	switch raw {
	case "stop", "eos", "":
		kind = llm.FinishStop
	case "length":
		kind = llm.FinishLength
	case "tool_calls", "function_call":
		kind = llm.FinishToolCalls
	case "content_filter":
		kind = llm.FinishContentFilter
	}
	if calledTools && (kind == llm.FinishStop || kind == llm.FinishOther) {
		kind = llm.FinishToolCalls
	}
	return llm.FinishReason{Reason: kind, Raw: raw}
}

func invalidResponse(msg string, data []byte) *llm.Error {
	return &llm.Error{Kind: llm.ErrInvalidResponse, Provider: ProviderName, Message: msg + "; body: " + llm.BodyExcerpt(data)}
}
