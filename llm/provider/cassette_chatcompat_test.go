package provider

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/chatcompat"
)

// The Chat Completions recordings (OpenAI itself and a llama.cpp server):
// no request field is ignored.
func init() {
	d := cassetteDialect{
		newClient: func(baseURL string) llm.Client {
			c, err := chatcompat.New(chatcompat.Config{BaseURL: baseURL + "/v1", APIKey: "sk-cassette"})
			if err != nil {
				panic(err)
			}
			return c
		},
		requestFromRecording: chatRequest,
		expected:             chatExpected,
	}
	cassetteDialects["TestOpenAICommon"] = d
	cassetteDialects["TestOpenAICompatible"] = d
}

// chatRequest decodes a recorded Chat Completions body. The output limit
// arrives as max_tokens or max_completion_tokens; which one the adapter
// picks is left to its default so that the comparison checks it.
func chatRequest(t *testing.T, body []byte) llm.Request {
	t.Helper()
	v := decodeJSON(t, body)
	req := llm.Request{Model: jstr(v, "model"), ReasoningEffort: jstr(v, "reasoning_effort"),
		MaxOutputTokens: max(jint(v, "max_tokens"), jint(v, "max_completion_tokens"))}
	if temp, ok := jpath(v, "temperature").(float64); ok {
		req.Temperature = &temp
	}
	for _, tool := range jarr(v, "tools") {
		params, _ := json.Marshal(jpath(tool, "function", "parameters"))
		req.Tools = append(req.Tools, llm.ToolDefinition{Name: jstr(tool, "function", "name"),
			Description: jstr(tool, "function", "description"), Parameters: params})
	}
	req.ToolChoice = toolChoiceFromRecording(jpath(v, "tool_choice"))
	for _, m := range jarr(v, "messages") {
		req.Messages = appendChatMessage(t, req.Messages, m)
	}
	return req
}

func appendChatMessage(t *testing.T, msgs []llm.Message, m any) []llm.Message {
	t.Helper()
	switch jstr(m, "role") {
	case "system", "developer":
		return append(msgs, llm.SystemMessage(messageText(m)))
	case "user":
		return append(msgs, llm.UserMessage(messageText(m)))
	case "tool":
		part := llm.ContentPart{Kind: llm.KindToolResult, ToolResult: &llm.ToolResult{ToolCallID: jstr(m, "tool_call_id"), Content: messageText(m)}}
		if n := len(msgs); n > 0 && msgs[n-1].Role == llm.RoleTool {
			msgs[n-1].Content = append(msgs[n-1].Content, part)
			return msgs
		}
		return append(msgs, llm.Message{Role: llm.RoleTool, Content: []llm.ContentPart{part}})
	case "assistant":
		out := llm.Message{Role: llm.RoleAssistant}
		if r := jstr(m, "reasoning_content"); r != "" {
			out.Content = append(out.Content, llm.ContentPart{Kind: llm.KindReasoning, Provider: "chatcompat", Reasoning: &llm.Reasoning{Text: r}})
		}
		if text := messageText(m); text != "" {
			out.Content = append(out.Content, llm.ContentPart{Kind: llm.KindText, Text: text})
		}
		for _, c := range jarr(m, "tool_calls") {
			args, argErr := llm.ParseToolArguments(jstr(c, "function", "arguments"))
			out.Content = append(out.Content, llm.ContentPart{Kind: llm.KindToolCall, ToolCall: &llm.ToolCall{
				ID: jstr(c, "id"), Name: jstr(c, "function", "name"), Arguments: args, ArgumentsError: argErr}})
		}
		return append(msgs, out)
	}
	t.Fatalf("unexpected message %s", compact(m))
	return nil
}

// chatExpected reads a recorded chat.completion, or folds the chunks of a
// recorded stream: deltas concatenated, tool calls assembled by index, the
// last finish_reason and usage.
func chatExpected(t *testing.T, body []byte, streaming bool) cassetteExpectation {
	t.Helper()
	var want cassetteExpectation
	var usage any
	finish := ""
	if !streaming {
		v := decodeJSON(t, body)
		msg := jpath(v, "choices", 0, "message")
		want.Text = jstr(msg, "content")
		want.Reasoning = jstr(msg, "reasoning_content") + jstr(msg, "reasoning")
		for _, c := range jarr(msg, "tool_calls") {
			want.ToolCalls = append(want.ToolCalls, cassetteToolCall{ID: jstr(c, "id"), Name: jstr(c, "function", "name"), Args: parseArgs(t, jstr(c, "function", "arguments"))})
		}
		usage, finish = jpath(v, "usage"), jstr(v, "choices", 0, "finish_reason")
	} else {
		type call struct {
			id, name string
			args     strings.Builder
		}
		var calls []*call
		byIndex := map[int]*call{}
		for _, chunk := range sseData(t, body) {
			if u := jpath(chunk, "usage"); u != nil {
				usage = u
			}
			delta := jpath(chunk, "choices", 0, "delta")
			want.Text += jstr(delta, "content")
			want.Reasoning += jstr(delta, "reasoning_content") + jstr(delta, "reasoning")
			for _, tc := range jarr(delta, "tool_calls") {
				i := jint(tc, "index")
				c := byIndex[i]
				if c == nil {
					c = &call{}
					byIndex[i] = c
					calls = append(calls, c)
				}
				c.id += jstr(tc, "id")
				c.name += jstr(tc, "function", "name")
				c.args.WriteString(jstr(tc, "function", "arguments"))
			}
			if f := jstr(chunk, "choices", 0, "finish_reason"); f != "" {
				finish = f
			}
		}
		for _, c := range calls {
			want.ToolCalls = append(want.ToolCalls, cassetteToolCall{ID: c.id, Name: c.name, Args: parseArgs(t, c.args.String())})
		}
	}
	want.Usage = llm.Usage{InputTokens: jint(usage, "prompt_tokens"), OutputTokens: jint(usage, "completion_tokens"),
		CacheReadTokens: jint(usage, "prompt_tokens_details", "cached_tokens"), ReasoningTokens: jint(usage, "completion_tokens_details", "reasoning_tokens")}
	switch finish {
	case "stop":
		want.Finish = finishFor(finish, llm.FinishStop)
	case "tool_calls":
		want.Finish = finishFor(finish, llm.FinishToolCalls)
	default:
		t.Fatalf("recorded finish_reason %q is not covered by this test", finish)
	}
	return want
}
