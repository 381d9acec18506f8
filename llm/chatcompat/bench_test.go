package chatcompat

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// BenchmarkStreamDecode decodes the largest recorded Chat Completions stream.
func BenchmarkStreamDecode(b *testing.B) {
	llmtest.BenchmarkStreamDecode(b, decodeStream, "TestOpenAICommon", "TestOpenAICompatible")
}

// BenchmarkBuildRequest200 encodes a 200-message history of tool rounds.
func BenchmarkBuildRequest200(b *testing.B) {
	msgs := []llm.Message{llm.SystemMessage(strings.Repeat("You are a careful coding agent. ", 40)), llm.UserMessage("Fix the flaky test.")}
	for i := 0; len(msgs) < 200; i++ {
		id := fmt.Sprintf("call_%d", i)
		msgs = append(msgs, llm.Message{Role: llm.RoleAssistant, Content: []llm.ContentPart{
			{Kind: llm.KindReasoning, Provider: ProviderName, Reasoning: &llm.Reasoning{Text: "Look at the file first."}},
			{Kind: llm.KindText, Text: "Reading the file."},
			{Kind: llm.KindToolCall, ToolCall: &llm.ToolCall{ID: id, Name: "read_file", Arguments: json.RawMessage(`{"path":"payments/charge_test.go"}`)}},
		}}, llm.ToolResultMessage(llm.ToolResult{ToolCallID: id, Content: strings.Repeat("func TestCharge(t *testing.T) {}\n", 30)}))
	}
	req := llm.Request{Model: "qwen3", Messages: msgs,
		Tools: []llm.ToolDefinition{{Name: "read_file", Description: "Read a file", Parameters: json.RawMessage(`{"type":"object"}`)}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BuildRequest(req, true); err != nil {
			b.Fatal(err)
		}
	}
}
