package gemini

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/internal/golden"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// Gemini's built-in tools each go as a tool of their own beside the
// function declarations: {"googleSearch":{}}, {"codeExecution":{}},
// {"urlContext":{}}.
func TestProviderToolsGolden(t *testing.T) {
	gt := func(typ string) llm.ToolDefinition {
		return llm.ToolDefinition{Provider: &llm.ProviderTool{Provider: "gemini", Type: typ}}
	}
	req := llm.Request{Model: "gemini-2.5-pro", Messages: []llm.Message{llm.UserMessage("what changed in Go 1.26?")},
		Tools: []llm.ToolDefinition{{Name: "shell", Description: "run", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
			gt("google_search"), gt("code_execution")},
		ProviderOptions: llm.ProviderOptions{"gemini": {"tools": []any{map[string]any{"provider_tool": map[string]any{"type": "url_context"}}}}}}
	body, err := EncodeBody(req)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "provider_tools.golden.json"), llmtest.IndentJSON(body))
	if !strings.Contains(string(body), `{"googleSearch":{}},{"codeExecution":{}},{"urlContext":{}}`) {
		t.Errorf("built-in tools not as documented: %s", body)
	}
	// Built-in tools alone: no function calling config.
	req.Tools = req.Tools[1:]
	body, err = EncodeBody(req)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), "functionCallingConfig") || strings.Contains(string(body), "functionDeclarations") {
		t.Errorf("built-in tools alone carry a function config: %s", body)
	}
}

// Code the model ran is content (KindServerTool), not a call, and goes
// back to the API as it came.
func TestCodeExecutionPartsAreContent(t *testing.T) {
	resp, err := ParseResponse([]byte(`{"candidates":[{"content":{"role":"model","parts":[` +
		`{"executableCode":{"language":"PYTHON","code":"print(2**10)"}},` +
		`{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"1024\n"}},` +
		`{"text":"It is 1024."}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls()) != 0 || resp.Text() != "It is 1024." || resp.FinishReason.Reason != llm.FinishStop {
		t.Fatalf("calls %v text %q finish %+v", resp.ToolCalls(), resp.Text(), resp.FinishReason)
	}
	if k := resp.Message.Content; len(k) != 3 || k[0].Kind != llm.KindServerTool || k[1].Kind != llm.KindServerTool ||
		k[0].ServerTool.Type != "executableCode" || k[1].ServerTool.Type != "codeExecutionResult" {
		t.Fatalf("content %+v", resp.Message.Content)
	}
	next := llm.Request{Model: "gemini-2.5-pro", Messages: []llm.Message{llm.UserMessage("2^10?"), resp.Message, llm.UserMessage("thanks")}}
	body, err := EncodeBody(next)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `{"executableCode":{"language":"PYTHON","code":"print(2**10)"}},{"codeExecutionResult":{"outcome":"OUTCOME_OK","output":"1024\n"}}`) {
		t.Errorf("code parts not sent back as they came: %s", body)
	}
}
