package provider

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/openai"
)

// The Responses API recordings: no request field is ignored; the adapter
// must build exactly what was recorded.
func init() {
	d := cassetteDialect{
		newClient: func(baseURL string) llm.Client {
			c, err := openai.New(openai.Config{BaseURL: baseURL + "/v1", APIKey: "sk-cassette"})
			if err != nil {
				panic(err)
			}
			return c
		},
		requestFromRecording: responsesRequest,
		expected:             responsesExpected,
	}
	cassetteDialects["TestOpenAIResponses"] = d
}

// responsesRequest decodes a recorded Responses API body.
func responsesRequest(t *testing.T, body []byte) llm.Request {
	t.Helper()
	v := decodeJSON(t, body)
	req := llm.Request{Model: jstr(v, "model"), MaxOutputTokens: jint(v, "max_output_tokens"),
		ReasoningEffort: jstr(v, "reasoning", "effort")}
	opts := map[string]any{}
	if store, _ := jpath(v, "store").(bool); store {
		opts["store"] = true
	}
	if s := jstr(v, "reasoning", "summary"); s != "" {
		opts["reasoning_summary"] = s
	}
	if inc := jarr(v, "include"); inc != nil {
		opts["include"] = inc
	}
	if len(opts) > 0 {
		req.ProviderOptions = llm.ProviderOptions{"openai": opts}
	}
	if temp, ok := jpath(v, "temperature").(float64); ok {
		req.Temperature = &temp
	}
	for _, tool := range jarr(v, "tools") {
		params, _ := json.Marshal(jpath(tool, "parameters"))
		req.Tools = append(req.Tools, llm.ToolDefinition{Name: jstr(tool, "name"), Description: jstr(tool, "description"), Parameters: params})
	}
	req.ToolChoice = toolChoiceFromRecording(jpath(v, "tool_choice"))
	for _, item := range jarr(v, "input") {
		req.Messages = appendInputItem(t, req.Messages, item)
	}
	return req
}

// toolChoiceFromRecording reads the OpenAI tool_choice forms.
func toolChoiceFromRecording(v any) llm.ToolChoice {
	switch c := v.(type) {
	case string:
		return llm.ToolChoice{Mode: llm.ToolChoiceMode(c)}
	case map[string]any:
		name := jstr(c, "name")
		if name == "" {
			name = jstr(c, "function", "name")
		}
		return llm.ToolChoice{Mode: llm.ToolChoiceNamed, Name: name}
	}
	return llm.ToolChoice{}
}

// appendInputItem adds one input item, merging consecutive assistant items
// and consecutive tool outputs into one message each.
func appendInputItem(t *testing.T, msgs []llm.Message, item any) []llm.Message {
	t.Helper()
	var part llm.ContentPart
	role := llm.RoleAssistant
	switch typ := jstr(item, "type"); {
	case typ == "function_call":
		args, argErr := llm.ParseToolArguments(jstr(item, "arguments"))
		part = llm.ContentPart{Kind: llm.KindToolCall, ToolCall: &llm.ToolCall{ID: jstr(item, "call_id"), Name: jstr(item, "name"), Arguments: args, ArgumentsError: argErr}}
	case typ == "function_call_output":
		role = llm.RoleTool
		part = llm.ContentPart{Kind: llm.KindToolResult, ToolResult: &llm.ToolResult{ToolCallID: jstr(item, "call_id"), Content: jstr(item, "output")}}
	case typ == "reasoning":
		raw, _ := json.Marshal(item)
		part = llm.ContentPart{Kind: llm.KindReasoning, Provider: "openai", Raw: raw,
			Reasoning: &llm.Reasoning{Signature: jstr(item, "encrypted_content"), ID: jstr(item, "id")}}
	case jstr(item, "role") == "developer" || jstr(item, "role") == "system":
		return append(msgs, llm.SystemMessage(messageText(item)))
	case jstr(item, "role") == "user":
		return append(msgs, llm.UserMessage(messageText(item)))
	case jstr(item, "role") == "assistant":
		part = llm.ContentPart{Kind: llm.KindText, Text: messageText(item)}
	default:
		t.Fatalf("unexpected input item %s", compact(item))
	}
	if n := len(msgs); n > 0 && msgs[n-1].Role == role {
		msgs[n-1].Content = append(msgs[n-1].Content, part)
		return msgs
	}
	return append(msgs, llm.Message{Role: role, Content: []llm.ContentPart{part}})
}

// messageText reads a message's content, a string or a list of text parts.
func messageText(item any) string {
	if s, ok := jpath(item, "content").(string); ok {
		return s
	}
	var b strings.Builder
	for _, c := range jarr(item, "content") {
		b.WriteString(jstr(c, "text"))
	}
	return b.String()
}

// responsesExpected reads a recorded response: the response object itself,
// or for a stream the one carried by its terminal event.
func responsesExpected(t *testing.T, body []byte, streaming bool) cassetteExpectation {
	t.Helper()
	var resp any
	if !streaming {
		resp = decodeJSON(t, body)
	} else {
		for _, ev := range sseData(t, body) {
			if typ := jstr(ev, "type"); typ == "response.completed" || typ == "response.incomplete" {
				resp = jpath(ev, "response")
			}
		}
		if resp == nil {
			t.Fatal("the recorded stream has no response.completed event")
		}
	}
	var want cassetteExpectation
	for _, item := range jarr(resp, "output") {
		switch jstr(item, "type") {
		case "message":
			for _, c := range jarr(item, "content") {
				want.Text += jstr(c, "text")
			}
		case "reasoning":
			var texts []string
			for _, s := range jarr(item, "summary") {
				texts = append(texts, jstr(s, "text"))
			}
			want.Reasoning += strings.Join(texts, "\n\n")
			if sig := jstr(item, "encrypted_content"); sig != "" {
				want.Signatures = append(want.Signatures, sig)
			}
		case "function_call":
			want.ToolCalls = append(want.ToolCalls, cassetteToolCall{ID: jstr(item, "call_id"), Name: jstr(item, "name"), Args: parseArgs(t, jstr(item, "arguments"))})
		}
	}
	u := jpath(resp, "usage")
	want.Usage = llm.Usage{InputTokens: jint(u, "input_tokens"), OutputTokens: jint(u, "output_tokens"),
		CacheReadTokens: jint(u, "input_tokens_details", "cached_tokens"), ReasoningTokens: jint(u, "output_tokens_details", "reasoning_tokens")}
	status := jstr(resp, "status")
	switch {
	case status == "completed" && len(want.ToolCalls) > 0:
		want.Finish = finishFor(status, llm.FinishToolCalls)
	case status == "completed":
		want.Finish = finishFor(status, llm.FinishStop)
	default:
		t.Fatalf("recorded status %q is not covered by this test", status)
	}
	return want
}
