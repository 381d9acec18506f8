package llmtest

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/internal/golden"
	"github.com/agentfleet/agentfleet/llm"
)

// WireCase is a request whose encoded body an adapter's golden test keeps
// under testdata/, one file per case and wire format.
type WireCase struct {
	Name    string // file-name friendly
	Request llm.Request
}

// AnswerSchema is the response format the suite asks for: an object with
// an integer "answer" and a string "unit", both required.
var AnswerSchema = json.RawMessage(`{"type":"object","properties":{"answer":{"type":"integer"},"unit":{"type":"string"}},"required":["answer","unit"],"additionalProperties":false}`)

// AnswerFormat is AnswerSchema named "answer", strict.
func AnswerFormat() *llm.ResponseFormat {
	return &llm.ResponseFormat{Name: "answer", Description: "The sum and its unit.", Schema: AnswerSchema, Strict: true}
}

// WireCases are the requests whose bodies show tool choice and structured
// output on a wire format: each tool choice mode with two tools offered, a
// response format alone, and a response format beside tools.
func WireCases(model string) []WireCase {
	base := func() llm.Request {
		return llm.Request{Model: model, Messages: []llm.Message{llm.SystemMessage("Be brief."), llm.UserMessage("What is 2+3 apples?")}}
	}
	tools := []llm.ToolDefinition{
		{Name: "add", Description: "Add two numbers", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`)},
		{Name: "now", Description: "The current time", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
	}
	withTools := func(c llm.ToolChoice) llm.Request {
		r := base()
		r.Tools, r.ToolChoice = tools, c
		return r
	}
	structured := base()
	structured.ResponseFormat = AnswerFormat()
	structuredTools := withTools(llm.ToolChoice{Mode: llm.ToolChoiceAuto})
	structuredTools.ResponseFormat = AnswerFormat()
	return []WireCase{
		{"tool_choice_auto", withTools(llm.ToolChoice{Mode: llm.ToolChoiceAuto})},
		{"tool_choice_none", withTools(llm.ToolChoice{Mode: llm.ToolChoiceNone})},
		{"tool_choice_required", withTools(llm.ToolChoice{Mode: llm.ToolChoiceRequired})},
		{"tool_choice_named", withTools(llm.ToolChoice{Mode: llm.ToolChoiceNamed, Name: "add"})},
		{"response_format", structured},
		{"response_format_tools", structuredTools},
	}
}

// GoldenRequest is the representative request a provider kind's golden
// body test sends through its real client: a system prompt, a user
// message, one tool, a required tool choice, the AnswerFormat response
// format and an output limit.
func GoldenRequest(model string) llm.Request {
	return llm.Request{Model: model, MaxOutputTokens: 1024,
		Messages: []llm.Message{llm.SystemMessage("Be brief."), llm.UserMessage("What is 2+3 apples?")},
		Tools: []llm.ToolDefinition{{Name: "add", Description: "Add two numbers",
			Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`)}},
		ToolChoice:     llm.ToolChoice{Mode: llm.ToolChoiceRequired},
		ResponseFormat: AnswerFormat(),
	}
}

// IndentJSON re-indents a body for a golden file (two spaces, fields in
// the order sent, a final newline), so diffs show one field a line.
func IndentJSON(body []byte) []byte {
	var b bytes.Buffer
	if err := json.Indent(&b, body, "", "  "); err != nil {
		return body
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// CheckWireBodies encodes every WireCase with encode and compares each body,
// indented, with testdata/<prefix><case>.golden.json (rewritten with
// -update). Tool choice and response format must also reach the body:
// a case whose body does not mention the chosen tool, or the schema's
// "answer" property, fails even when its golden file agrees.
func CheckWireBodies(t *testing.T, prefix, model string, encode func(llm.Request) ([]byte, error)) {
	for _, c := range WireCases(model) {
		t.Run(c.Name, func(t *testing.T) {
			body, err := encode(c.Request)
			if err != nil {
				t.Fatalf("encoding %s: %v", c.Name, err)
			}
			if c.Request.ToolChoice.Mode == llm.ToolChoiceNamed && !strings.Contains(string(body), `"add"`) {
				t.Errorf("the body does not name the chosen tool: %s", body)
			}
			if c.Request.ResponseFormat != nil && !strings.Contains(string(body), `"answer"`) {
				t.Errorf("the body carries no response schema: %s", body)
			}
			golden.Check(t, filepath.Join("testdata", prefix+c.Name+".golden.json"), IndentJSON(body))
		})
	}
}
