package provider

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/gemini"
)

// The Gemini recordings. No request field is ignored: the recording client
// sent systemInstruction with role "user" and echoed call ids, and so do we.
// Its ids for models that send none ("1", "2") reach our adapter through the
// decoded conversation, as ids our adapter synthesized would.
func init() {
	cassetteDialects["TestGoogle"] = cassetteDialect{
		newClient: func(baseURL string) llm.Client {
			c, err := gemini.New(gemini.Config{BaseURL: baseURL, APIKey: "AIza-cassette"})
			if err != nil {
				panic(err)
			}
			return c
		},
		requestFromRecording: geminiRequest,
		modelFromURL:         geminiModel,
		expected:             geminiExpected,
	}
}

// geminiModel reads the model from .../models/{model}:generateContent.
func geminiModel(rawURL string) string {
	_, rest, _ := strings.Cut(rawURL, "/models/")
	model, _, _ := strings.Cut(rest, ":")
	return model
}

// geminiRequest decodes a recorded generateContent body. Declarations go
// back to JSON Schema with lower-case types, as a caller writes them;
// thinkingLevel becomes ReasoningEffort and thinkingBudget and
// includeThoughts the provider options.
func geminiRequest(t *testing.T, body []byte) llm.Request {
	t.Helper()
	v := decodeJSON(t, body)
	req := llm.Request{MaxOutputTokens: jint(v, "generationConfig", "maxOutputTokens")}
	for _, p := range jarr(v, "systemInstruction", "parts") {
		req.Messages = append(req.Messages, llm.SystemMessage(jstr(p, "text")))
	}
	if temp, ok := jpath(v, "generationConfig", "temperature").(float64); ok {
		req.Temperature = &temp
	}
	if tc := jpath(v, "generationConfig", "thinkingConfig"); tc != nil {
		opts := map[string]any{}
		if b, ok := jpath(tc, "thinkingBudget").(float64); ok {
			opts["thinking_budget"] = int(b)
		}
		if inc, ok := jpath(tc, "includeThoughts").(bool); ok {
			opts["include_thoughts"] = inc
		}
		req.ProviderOptions = llm.ProviderOptions{"gemini": opts}
		req.ReasoningEffort = strings.ToLower(jstr(tc, "thinkingLevel"))
	}
	for _, tool := range jarr(v, "tools") {
		for _, d := range jarr(tool, "functionDeclarations") {
			schema, _ := json.Marshal(lowerSchemaTypes(jpath(d, "parameters")))
			req.Tools = append(req.Tools, llm.ToolDefinition{Name: jstr(d, "name"), Description: jstr(d, "description"), Parameters: schema})
		}
	}
	modes := map[string]llm.ToolChoiceMode{"AUTO": llm.ToolChoiceAuto, "ANY": llm.ToolChoiceRequired, "NONE": llm.ToolChoiceNone}
	req.ToolChoice.Mode = modes[jstr(v, "toolConfig", "functionCallingConfig", "mode")]
	for _, c := range jarr(v, "contents") {
		req.Messages = append(req.Messages, geminiMessages(jstr(c, "role"), jarr(c, "parts"))...)
	}
	return req
}

func lowerSchemaTypes(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	for k, e := range m {
		switch {
		case k == "type":
			if s, ok := e.(string); ok {
				m[k] = strings.ToLower(s)
			}
		case k == "properties":
			for _, p := range jpath(e).(map[string]any) {
				lowerSchemaTypes(p)
			}
		default:
			lowerSchemaTypes(e)
		}
	}
	return m
}

func geminiMessages(role string, parts []any) []llm.Message {
	msg := llm.Message{Role: llm.RoleUser}
	if role == "model" {
		msg.Role = llm.RoleAssistant
	}
	results := llm.Message{Role: llm.RoleTool}
	for _, p := range parts {
		sig := jstr(p, "thoughtSignature")
		thought, _ := jpath(p, "thought").(bool)
		switch {
		case jpath(p, "functionCall") != nil:
			args, _ := json.Marshal(jpath(p, "functionCall", "args"))
			msg.Content = append(msg.Content, llm.ContentPart{Kind: llm.KindToolCall, ToolCall: &llm.ToolCall{
				ID: jstr(p, "functionCall", "id"), Name: jstr(p, "functionCall", "name"), Arguments: args, Signature: sig}})
		case jpath(p, "functionResponse") != nil:
			content, isErr := jstr(p, "functionResponse", "response", "result"), false
			if e, ok := jpath(p, "functionResponse", "response", "error").(string); ok {
				content, isErr = e, true
			}
			results.Content = append(results.Content, llm.ContentPart{Kind: llm.KindToolResult, ToolResult: &llm.ToolResult{
				ToolCallID: jstr(p, "functionResponse", "id"), Name: jstr(p, "functionResponse", "name"), Content: content, IsError: isErr}})
		case thought:
			msg.Content = append(msg.Content, llm.ContentPart{Kind: llm.KindReasoning,
				Reasoning: &llm.Reasoning{Text: jstr(p, "text"), Signature: sig}, Provider: "gemini"})
		default:
			msg.Content = append(msg.Content, llm.ContentPart{Kind: llm.KindText, Text: jstr(p, "text"), Signature: sig})
		}
	}
	var out []llm.Message
	for _, m := range []llm.Message{results, msg} {
		if len(m.Content) > 0 {
			out = append(out, m)
		}
	}
	return out
}

// geminiExpected folds the recorded response, or every streamed chunk, into
// the expectation: usage from the last chunk, thought text as reasoning,
// every thoughtSignature in part order, and for calls without an id the
// synthetic one the adapter documents, call_<responseId>_<n>. STOP with
// function calls is a tool_calls finish.
func geminiExpected(t *testing.T, body []byte, streaming bool) cassetteExpectation {
	t.Helper()
	chunks := []any{decodeJSONIf(t, body, !streaming)}
	if streaming {
		chunks = sseData(t, body)
	}
	var want cassetteExpectation
	finish := ""
	for _, c := range chunks {
		if u := jpath(c, "usageMetadata"); u != nil {
			thoughts := jint(u, "thoughtsTokenCount")
			want.Usage = llm.Usage{InputTokens: jint(u, "promptTokenCount") + jint(u, "toolUsePromptTokenCount"),
				OutputTokens: jint(u, "candidatesTokenCount") + thoughts, ReasoningTokens: thoughts,
				CacheReadTokens: jint(u, "cachedContentTokenCount")}
		}
		if f := jstr(c, "candidates", 0, "finishReason"); f != "" {
			finish = f
		}
		for _, p := range jarr(c, "candidates", 0, "content", "parts") {
			if sig := jstr(p, "thoughtSignature"); sig != "" {
				want.Signatures = append(want.Signatures, sig)
			}
			thought, _ := jpath(p, "thought").(bool)
			switch {
			case jpath(p, "functionCall") != nil:
				id := jstr(p, "functionCall", "id")
				if id == "" {
					id = fmt.Sprintf("call_%s_%d", jstr(c, "responseId"), len(want.ToolCalls))
				}
				want.ToolCalls = append(want.ToolCalls, cassetteToolCall{ID: id, Name: jstr(p, "functionCall", "name"), Args: jpath(p, "functionCall", "args")})
			case thought:
				want.Reasoning += jstr(p, "text")
			default:
				want.Text += jstr(p, "text")
			}
		}
	}
	kinds := map[string]llm.FinishKind{"STOP": llm.FinishStop, "MAX_TOKENS": llm.FinishLength, "SAFETY": llm.FinishContentFilter}
	kind := kinds[finish]
	if kind == llm.FinishStop && len(want.ToolCalls) > 0 {
		kind = llm.FinishToolCalls
	}
	want.Finish = finishFor(finish, kind)
	return want
}

func decodeJSONIf(t *testing.T, body []byte, ok bool) any {
	if !ok {
		return nil
	}
	return decodeJSON(t, body)
}

// TestGoogleRoundTrip checks each follow-up request with our own parse of
// the previous response as the model turn: thoughtSignatures return on the
// same parts and thought summaries are left out, as recorded.
func TestGoogleRoundTrip(t *testing.T) { checkRoundTrip(t, "TestGoogle") }
