package gemini

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// BenchmarkStreamDecode decodes the largest recorded streamGenerateContent stream.
func BenchmarkStreamDecode(b *testing.B) {
	llmtest.BenchmarkStreamDecode(b, decodeStream, "TestGoogle")
}

// history200 is a 200-message conversation of text, signed function calls
// and their results.
func history200() llm.Request {
	req := llm.Request{Model: "gemini-2.5-pro", ReasoningEffort: "medium",
		Tools: []llm.ToolDefinition{{Name: "read_file", Description: "Read a file",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}},
		Messages: []llm.Message{llm.SystemMessage("You are a coding agent.")}}
	for i := 0; len(req.Messages) < 200; i++ {
		id := fmt.Sprintf("call_r%d_0", i)
		req.Messages = append(req.Messages,
			llm.UserMessage(fmt.Sprintf("Please look at file %d and tell me what it does.", i)),
			llm.Message{Role: llm.RoleAssistant, Content: []llm.ContentPart{
				{Kind: llm.KindReasoning, Reasoning: &llm.Reasoning{Text: "I should read the file."}, Provider: providerName},
				{Kind: llm.KindText, Text: "Reading it now."},
				{Kind: llm.KindToolCall, ToolCall: &llm.ToolCall{ID: id, Name: "read_file",
					Arguments: json.RawMessage(fmt.Sprintf(`{"path":"pkg/file%d.go"}`, i)), Signature: strings.Repeat("s", 400)}},
			}},
			// No Name: resolved from the call in the history.
			llm.ToolResultMessage(llm.ToolResult{ToolCallID: id, Content: strings.Repeat("package main\n", 40)}),
		)
	}
	req.Messages = req.Messages[:200]
	return req
}

// BenchmarkBuildRequest builds and encodes the body for a 200-message
// history.
func BenchmarkBuildRequest(b *testing.B) {
	req := history200()
	b.ReportAllocs()
	for b.Loop() {
		w, err := buildRequest(req)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(w); err != nil {
			b.Fatal(err)
		}
	}
}
