package llm

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

var sumSchema = json.RawMessage(`{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"]}`)

func TestResponseFormatCheck(t *testing.T) {
	for _, c := range []struct {
		f    ResponseFormat
		want string
	}{
		{ResponseFormat{Name: "answer", Schema: sumSchema}, ""},
		{ResponseFormat{Name: "two words", Schema: sumSchema}, "Name"},
		{ResponseFormat{Name: "a", Schema: json.RawMessage(`{"type":"string"}`)}, `"type": "object"`},
		{ResponseFormat{Name: "a", Schema: json.RawMessage(`[`)}, "not a JSON object"},
		{ResponseFormat{Name: "a", Schema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"nope"}}}`)}, "does not compile"},
	} {
		err := c.f.Check()
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("Check(%s %s) = %v, want %q", c.f.Name, c.f.Schema, err, c.want)
		}
	}
}

func TestCheckAnswer(t *testing.T) {
	req := Request{ResponseFormat: &ResponseFormat{Name: "sum", Schema: sumSchema}}
	ok := &Response{Message: AssistantMessage(`{"answer": 5}`)}
	if err := CheckAnswer("p", req, ok); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{`{"answer":"five"}`, `{}`, `five`} {
		err := CheckAnswer("p", req, &Response{Message: AssistantMessage(text)})
		var e *Error
		var se *SchemaError
		if !errors.As(err, &e) || e.Kind != ErrInvalidResponse || !errors.As(err, &se) || se.Answer != text || len(se.Violations) == 0 {
			t.Errorf("answer %s: %v, want invalid_response with a SchemaError", text, err)
		}
	}
	calling := &Response{Message: Message{Role: RoleAssistant, Content: []ContentPart{{Kind: KindToolCall, ToolCall: &ToolCall{Name: "x"}}}}}
	if err := CheckAnswer("p", req, calling); err != nil {
		t.Errorf("a tool round is not the answer, yet: %v", err)
	}
}

func TestAsAnswerTool(t *testing.T) {
	f := &ResponseFormat{Name: "sum", Schema: sumSchema}
	tool := ToolDefinition{Name: "add", Parameters: sumSchema}
	for _, c := range []struct {
		tools  []ToolDefinition
		choice ToolChoice
		want   ToolChoice
	}{
		{nil, ToolChoice{}, ToolChoice{Mode: ToolChoiceNamed, Name: "sum"}},
		{[]ToolDefinition{tool}, ToolChoice{Mode: ToolChoiceAuto}, ToolChoice{Mode: ToolChoiceRequired}},
		{[]ToolDefinition{tool}, ToolChoice{Mode: ToolChoiceNone}, ToolChoice{Mode: ToolChoiceNamed, Name: "sum"}},
		{[]ToolDefinition{tool}, ToolChoice{Mode: ToolChoiceNamed, Name: "add"}, ToolChoice{Mode: ToolChoiceNamed, Name: "add"}},
	} {
		in := Request{Tools: c.tools, ToolChoice: c.choice, ResponseFormat: f}
		out, err := AsAnswerTool(in)
		if err != nil {
			t.Fatal(err)
		}
		last := out.Tools[len(out.Tools)-1]
		if out.ToolChoice != c.want || len(out.Tools) != len(c.tools)+1 || last.Name != "sum" || string(last.Parameters) != string(sumSchema) {
			t.Errorf("%+v: choice %+v tools %+v, want %+v", c.choice, out.ToolChoice, out.Tools, c.want)
		}
		if len(in.Tools) != len(c.tools) {
			t.Errorf("the caller's tools changed")
		}
	}
	if _, err := AsAnswerTool(Request{Tools: []ToolDefinition{{Name: "sum"}}, ResponseFormat: f}); err == nil {
		t.Error("a tool with the format's name was accepted")
	}
}

func TestCheckToolChoice(t *testing.T) {
	tools := []ToolDefinition{{Name: "add"}}
	for _, c := range []struct {
		req  Request
		want string
	}{
		{Request{}, ""},
		{Request{ToolChoice: ToolChoice{Mode: ToolChoiceNone}}, ""},
		{Request{Tools: tools, ToolChoice: ToolChoice{Mode: ToolChoiceNamed, Name: "add"}}, ""},
		{Request{ToolChoice: ToolChoice{Mode: ToolChoiceRequired}}, "Tools is empty"},
		{Request{Tools: tools, ToolChoice: ToolChoice{Mode: ToolChoiceNamed}}, "Name is empty"},
		{Request{Tools: tools, ToolChoice: ToolChoice{Mode: ToolChoiceNamed, Name: "sub"}}, "not among"},
		{Request{Tools: tools, ToolChoice: ToolChoice{Mode: "any"}}, "not auto, none"},
	} {
		err := CheckToolChoice(c.req)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.req.ToolChoice, err, c.want)
		}
	}
}
