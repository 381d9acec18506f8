package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agentfleet/agentfleet/llm"
)

const providerName = "anthropic"

// parseResponse decodes a whole Messages API response.
func parseResponse(body []byte) (*llm.Response, error) {
	var w wireResponse
	if err := json.Unmarshal(body, &w); err != nil {
		return nil, invalidResponse(fmt.Sprintf("response body is not a Messages API response: %v", err), err)
	}
	if w.ID == "" && len(w.Content) == 0 && w.StopReason == "" {
		return nil, invalidResponse("response has no id, content or stop_reason: not a Messages API response", nil)
	}
	resp := &llm.Response{
		ID:           w.ID,
		Model:        w.Model,
		Provider:     providerName,
		Message:      llm.Message{Role: llm.RoleAssistant, Content: make([]llm.ContentPart, 0, len(w.Content))},
		FinishReason: finishReason(w.StopReason),
		Usage:        convertUsage(w.Usage),
	}
	for i := range w.Content {
		if p, ok := convertBlock(&w.Content[i]); ok {
			resp.Message.Content = append(resp.Message.Content, p)
		}
	}
	return resp, nil
}

// convertBlock maps one response block to a content part: server tool
// blocks become KindServerTool content (see servertools.go); block types
// we do not model are skipped.
func convertBlock(b *wireBlockIn) (llm.ContentPart, bool) {
	switch b.Type {
	case "text":
		return llm.ContentPart{Kind: llm.KindText, Text: b.Text}, true
	case "thinking":
		return reasoningPart(&llm.Reasoning{Text: b.Thinking, Signature: b.Signature}, b.Raw), true
	case "redacted_thinking":
		return reasoningPart(&llm.Reasoning{Redacted: true, Data: b.Data}, b.Raw), true
	case "tool_use":
		return llm.ContentPart{Kind: llm.KindToolCall, ToolCall: newToolCall(b.ID, b.Name, b.Input)}, true
	}
	if isServerBlock(b.Type) {
		return serverPart(b), true
	}
	return llm.ContentPart{}, false
}

func reasoningPart(r *llm.Reasoning, raw json.RawMessage) llm.ContentPart {
	return llm.ContentPart{Kind: llm.KindReasoning, Reasoning: r, Provider: providerName, Raw: raw}
}

// newToolCall builds a call whose arguments are a JSON object; anything else
// is kept as sent with ArgumentsError saying why it cannot be used.
func newToolCall(id, name string, args json.RawMessage) *llm.ToolCall {
	c := &llm.ToolCall{ID: id, Name: name, Arguments: args}
	if len(args) == 0 {
		c.Arguments = emptyObject
		return c
	}
	if !json.Valid(args) {
		c.ArgumentsError = "arguments are not valid JSON"
	} else if bytes.TrimSpace(args)[0] != '{' {
		c.ArgumentsError = "arguments are not a JSON object"
	}
	return c
}

// finishReason maps stop_reason to the unified kind.
func finishReason(raw string) llm.FinishReason {
	kind := llm.FinishOther
	switch raw {
	case "end_turn", "stop_sequence":
		kind = llm.FinishStop
	case "max_tokens":
		kind = llm.FinishLength
	case "tool_use":
		kind = llm.FinishToolCalls
	case "refusal":
		kind = llm.FinishContentFilter
	case "model_context_window_exceeded":
		kind = llm.FinishContextLength
	case "pause_turn":
		kind = llm.FinishPaused
	}
	return llm.FinishReason{Reason: kind, Raw: raw}
}

// convertUsage counts cache reads and writes into InputTokens (the API
// reports them separately), so InputTokens is the whole prompt.
func convertUsage(u wireUsage) llm.Usage {
	return llm.Usage{
		InputTokens:      u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
		OutputTokens:     u.OutputTokens,
		CacheReadTokens:  u.CacheReadInputTokens,
		CacheWriteTokens: u.CacheCreationInputTokens,
	}
}

func invalidResponse(msg string, err error) *llm.Error {
	return &llm.Error{Kind: llm.ErrInvalidResponse, Provider: providerName, Message: msg, Err: err}
}
