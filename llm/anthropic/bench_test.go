package anthropic

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/profiles"
)

// BenchmarkStreamDecode decodes the largest recorded Messages API stream.
func BenchmarkStreamDecode(b *testing.B) {
	llmtest.BenchmarkStreamDecode(b, decodeStream, "TestAnthropic")
}

// history200 is a 200-message conversation of text, thinking, tool calls
// and results.
func history200() llm.Request {
	req := llm.Request{Model: "claude-sonnet-4-5", ReasoningEffort: "medium",
		Tools: []llm.ToolDefinition{{Name: "read_file", Description: "Read a file",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)}},
		Messages: []llm.Message{llm.SystemMessage("You are a coding agent.")}}
	for i := 0; len(req.Messages) < 200; i++ {
		id := fmt.Sprintf("toolu_%04d", i)
		raw, _ := json.Marshal(thinkingBlock{Type: "thinking", Thinking: "I should read the file.", Signature: strings.Repeat("s", 400)})
		req.Messages = append(req.Messages,
			llm.UserMessage(fmt.Sprintf("Please look at file %d and tell me what it does.", i)),
			llm.Message{Role: llm.RoleAssistant, Content: []llm.ContentPart{
				{Kind: llm.KindReasoning, Reasoning: &llm.Reasoning{Text: "I should read the file.", Signature: strings.Repeat("s", 400)}, Provider: providerName, Raw: raw},
				{Kind: llm.KindText, Text: "Reading it now."},
				{Kind: llm.KindToolCall, ToolCall: &llm.ToolCall{ID: id, Name: "read_file", Arguments: json.RawMessage(fmt.Sprintf(`{"path":"pkg/file%d.go"}`, i))}},
			}},
			llm.ToolResultMessage(llm.ToolResult{ToolCallID: id, Content: strings.Repeat("package main\n", 40)}),
		)
	}
	req.Messages = req.Messages[:200]
	return req
}

// BenchmarkBuildRequest builds and encodes the body for a 200-message
// history.
func BenchmarkBuildRequest(b *testing.B) {
	req, tools := history200(), &toolsCache{}
	b.ReportAllocs()
	for b.Loop() {
		w, err := buildRequest(req, true)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := requestBody(w, req.Tools, tools); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeRequest builds and encodes the fleet benchmark's request:
// a 3 KB system prompt, one user message and the anthropic profile's tools.
func BenchmarkEncodeRequest(b *testing.B) {
	p := profiles.Anthropic("")
	req := llm.Request{Model: p.Model(), Tools: p.Tools(), ToolChoice: llm.ToolChoice{Mode: llm.ToolChoiceAuto},
		ProviderOptions: p.ProviderOptions(""),
		Messages:        []llm.Message{llm.SystemMessage(strings.Repeat("You are a coding agent. ", 128)), llm.UserMessage("benchmark task")}}
	header, tools := http.Header{}, &toolsCache{}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := encode("http://model/v1/messages", header, tools, req, true); err != nil {
			b.Fatal(err)
		}
	}
}
