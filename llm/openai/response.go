package openai

import (
	"encoding/json"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// wireResponse is the response object of the Responses API, also carried
// by the response.* stream events.
type wireResponse struct {
	ID                string            `json:"id"`
	Model             string            `json:"model"`
	Status            string            `json:"status"`
	Output            []json.RawMessage `json:"output"`
	Usage             *wireUsage        `json:"usage"`
	Error             *wireError        `json:"error"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
}

type wireUsage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// wireItem is one output item; which fields are set depends on Type.
type wireItem struct {
	Type             string          `json:"type"`
	ID               string          `json:"id"`
	CallID           string          `json:"call_id"`
	Name             string          `json:"name"`
	Arguments        string          `json:"arguments"`
	EncryptedContent string          `json:"encrypted_content"`
	Action           json.RawMessage `json:"action"` // web_search_call: {type, query}
	Summary          []struct {
		Text string `json:"text"`
	} `json:"summary"`
	Content []struct {
		Type    string `json:"type"` // output_text, refusal, reasoning_text
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
}

func (u *wireUsage) toUsage() llm.Usage {
	if u == nil {
		return llm.Usage{}
	}
	return llm.Usage{
		InputTokens:     u.InputTokens,
		OutputTokens:    u.OutputTokens,
		ReasoningTokens: u.OutputTokensDetails.ReasoningTokens,
		CacheReadTokens: u.InputTokensDetails.CachedTokens,
	}
}

// ParseResponse decodes a whole Responses API body.
func ParseResponse(data []byte) (*llm.Response, error) {
	var w wireResponse
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, invalidResponse("the response body is not a Responses API object: "+err.Error(), data)
	}
	resp, e := w.toResponse()
	if e != nil {
		return nil, e
	}
	return resp, nil
}

func invalidResponse(msg string, data []byte) *llm.Error {
	return &llm.Error{Kind: llm.ErrInvalidResponse, Provider: ProviderName, Message: msg + "; body: " + llm.BodyExcerpt(data)}
}

// toResponse converts a finished response object.
func (w *wireResponse) toResponse() (*llm.Response, *llm.Error) {
	if w.Status == "failed" && w.Error != nil {
		return nil, streamError(w.Error.code(), w.Error.Message)
	}
	out := &llm.Response{ID: w.ID, Model: w.Model, Provider: ProviderName, Usage: w.Usage.toUsage()}
	out.Message.Role = llm.RoleAssistant
	for _, raw := range w.Output {
		part, ok, err := itemPart(raw)
		if err != nil {
			return nil, err
		}
		if ok {
			out.Message.Content = append(out.Message.Content, part)
		}
	}
	out.FinishReason = finishReason(w, len(out.ToolCalls()) > 0)
	return out, nil
}

// itemPart converts one output item. Items of unknown type are skipped
// (ok false) for forward compatibility.
func itemPart(raw json.RawMessage) (llm.ContentPart, bool, *llm.Error) {
	var it wireItem
	if err := json.Unmarshal(raw, &it); err != nil {
		return llm.ContentPart{}, false, invalidResponse("an output item is not valid JSON: "+err.Error(), raw)
	}
	switch it.Type {
	case "reasoning":
		return reasoningPart(&it, raw), true, nil
	case "message":
		var b strings.Builder
		for _, c := range it.Content {
			b.WriteString(c.Text)
			b.WriteString(c.Refusal)
		}
		return llm.ContentPart{Kind: llm.KindText, Text: b.String()}, true, nil
	case "function_call":
		return llm.ContentPart{Kind: llm.KindToolCall, ToolCall: toolCall(&it)}, true, nil
	case "computer_call":
		// A client-run provider tool: a call for the loop to run.
		part, err := computerPart(raw)
		return part, err == nil, err
	case "web_search_call", "file_search_call", "code_interpreter_call":
		// A built-in tool the API ran: content, not a call to run.
		st := &llm.ServerTool{Type: it.Type, ID: it.ID, Name: strings.TrimSuffix(it.Type, "_call")}
		if len(it.Action) > 0 && json.Valid(it.Action) {
			st.Input = it.Action
		}
		return llm.ContentPart{Kind: llm.KindServerTool, ServerTool: st, Provider: ProviderName, Raw: raw}, true, nil
	}
	return llm.ContentPart{}, false, nil
}

func reasoningPart(it *wireItem, raw json.RawMessage) llm.ContentPart {
	texts := make([]string, 0, len(it.Summary))
	for _, s := range it.Summary {
		texts = append(texts, s.Text)
	}
	if len(texts) == 0 { // open-weight models return the reasoning itself
		for _, c := range it.Content {
			texts = append(texts, c.Text)
		}
	}
	return llm.ContentPart{
		Kind:      llm.KindReasoning,
		Reasoning: &llm.Reasoning{Text: strings.Join(texts, summarySeparator), Signature: it.EncryptedContent, ID: it.ID},
		Provider:  ProviderName,
		Raw:       append(json.RawMessage(nil), raw...),
	}
}

// summarySeparator joins the parts of a reasoning summary.
const summarySeparator = "\n\n"

func toolCall(it *wireItem) *llm.ToolCall {
	args, argErr := llm.ParseToolArguments(it.Arguments)
	return &llm.ToolCall{ID: it.CallID, Name: it.Name, Arguments: args, ArgumentsError: argErr, ItemID: it.ID}
}

// finishReason maps the response status. A completed response that called
// tools finishes with FinishToolCalls.
func finishReason(w *wireResponse, calledTools bool) llm.FinishReason {
	switch w.Status {
	case "completed", "":
		if calledTools {
			return llm.FinishReason{Reason: llm.FinishToolCalls, Raw: "completed"}
		}
		return llm.FinishReason{Reason: llm.FinishStop, Raw: "completed"}
	case "incomplete":
		reason := ""
		if w.IncompleteDetails != nil {
			reason = w.IncompleteDetails.Reason
		}
		switch reason {
		case "max_output_tokens":
			return llm.FinishReason{Reason: llm.FinishLength, Raw: reason}
		case "content_filter":
			return llm.FinishReason{Reason: llm.FinishContentFilter, Raw: reason}
		}
		return llm.FinishReason{Reason: llm.FinishOther, Raw: reason}
	case "failed":
		return llm.FinishReason{Reason: llm.FinishError, Raw: w.Status}
	}
	return llm.FinishReason{Reason: llm.FinishOther, Raw: w.Status}
}
