package openai

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// BenchmarkStreamDecode decodes the largest recorded Responses API stream.
func BenchmarkStreamDecode(b *testing.B) {
	llmtest.BenchmarkStreamDecode(b, decodeStream, "TestOpenAIResponses")
}

// history200 is a 200-message conversation: system, user, then rounds of
// assistant tool calls (with reasoning) and tool results.
func history200(provider string) []llm.Message {
	msgs := []llm.Message{llm.SystemMessage(strings.Repeat("You are a careful coding agent. ", 40)), llm.UserMessage("Fix the flaky test in payments/.")}
	for i := 0; len(msgs) < 200; i++ {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: []llm.ContentPart{
			{Kind: llm.KindReasoning, Provider: provider, Reasoning: &llm.Reasoning{Text: "Look at the file first.", Signature: strings.Repeat("x", 400), ID: "rs_" + id}},
			{Kind: llm.KindText, Text: "Reading the file."},
			{Kind: llm.KindToolCall, ToolCall: &llm.ToolCall{ID: id, Name: "read_file", Arguments: json.RawMessage(`{"path":"payments/charge_test.go","offset":1,"limit":200}`)}},
		}}, llm.ToolResultMessage(llm.ToolResult{ToolCallID: id, Name: "read_file", Content: strings.Repeat("func TestCharge(t *testing.T) {}\n", 30)}))
	}
	return msgs
}

// BenchmarkBuildRequest200 encodes a 200-message history.
func BenchmarkBuildRequest200(b *testing.B) {
	req := llm.Request{Model: "gpt-5", Messages: history200(ProviderName), ReasoningEffort: "medium",
		Tools: []llm.ToolDefinition{{Name: "read_file", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BuildRequest(req, true); err != nil {
			b.Fatal(err)
		}
	}
}
