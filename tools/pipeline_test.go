package tools

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
)

type echoParams struct {
	Text  string `json:"text"`
	Count int    `json:"count,omitempty"`
}

func testRegistry() *Registry {
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"count":{"type":"integer","minimum":1},"mode":{"type":"string","enum":["a","b"]}},"required":["text"],"additionalProperties":false}`)
	echo := Typed(Tool{Name: "echo", Parameters: schema}, func(_ context.Context, _ Call, p echoParams) (Output, error) {
		return Output{Text: strings.Repeat(p.Text, max(p.Count, 1))}, nil
	})
	fail := Tool{Name: "fail", Parameters: json.RawMessage(`{"type":"object"}`), Run: func(context.Context, Call) (Output, error) {
		return Output{}, errors.New("disk on fire")
	}}
	boom := Tool{Name: "boom", Parameters: json.RawMessage(`{"type":"object"}`), Run: func(context.Context, Call) (Output, error) {
		panic("boom")
	}}
	badSchema := Tool{Name: "bad_schema", Parameters: json.RawMessage(`{"type":"object","properties":{"x":{"type":"nope"}}}`), Run: func(context.Context, Call) (Output, error) {
		return Output{Text: "ran"}, nil
	}}
	return NewRegistry(echo, fail, boom, badSchema)
}

func TestPipelineErrors(t *testing.T) {
	tests := []struct {
		name string
		call llm.ToolCall
		want []string
	}{
		{"unknown tool", llm.ToolCall{Name: "nope", Arguments: json.RawMessage(`{}`)},
			[]string{`Unknown tool: "nope"`, "Available tools: bad_schema, boom, echo, fail"}},
		{"invalid JSON", llm.ToolCall{Name: "echo", Arguments: json.RawMessage(`{"text": "a"`)},
			[]string{"Tool error (echo): the arguments are not valid JSON (unexpected end of JSON input)"}},
		{"argument error from the adapter", llm.ToolCall{Name: "echo", Arguments: json.RawMessage(`{"te`), ArgumentsError: "unexpected EOF at offset 4"},
			[]string{"Tool error (echo): the arguments are not valid JSON (unexpected EOF at offset 4)"}},
		{"not an object", llm.ToolCall{Name: "echo", Arguments: json.RawMessage(`["text"]`)},
			[]string{"must be a JSON object, got an array"}},
		{"missing required", llm.ToolCall{Name: "echo", Arguments: json.RawMessage(`{}`)},
			[]string{"Tool error (echo): invalid arguments: at / (the arguments object): missing property 'text'"}},
		{"wrong type", llm.ToolCall{Name: "echo", Arguments: json.RawMessage(`{"text": 5}`)},
			[]string{"at /text: got number, want string"}},
		{"below minimum", llm.ToolCall{Name: "echo", Arguments: json.RawMessage(`{"text": "a", "count": 0}`)},
			[]string{"at /count: minimum: got 0, want 1"}},
		{"not in enum", llm.ToolCall{Name: "echo", Arguments: json.RawMessage(`{"text": "a", "mode": "c"}`)},
			[]string{"at /mode: value must be one of 'a', 'b'"}},
		{"unknown property", llm.ToolCall{Name: "echo", Arguments: json.RawMessage(`{"text": "a", "colour": "red"}`)},
			[]string{"additional properties 'colour' not allowed"}},
		{"tool error", llm.ToolCall{Name: "fail", Arguments: json.RawMessage(`{}`)},
			[]string{"Tool error (fail): disk on fire"}},
		{"panic", llm.ToolCall{Name: "boom", Arguments: json.RawMessage(`{}`)},
			[]string{"Tool error (boom): the tool failed unexpectedly (panic: boom)"}},
		{"schema that does not compile", llm.ToolCall{Name: "bad_schema", Arguments: json.RawMessage(`{}`)},
			[]string{"Tool error (bad_schema): invalid arguments: the tool's parameter schema does not compile"}},
	}
	reg := testRegistry()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.call.ID = "c1"
			res := reg.Execute(context.Background(), tt.call, nil, ExecOptions{})
			if !res.IsError || res.CallID != "c1" || res.Name != tt.call.Name {
				t.Fatalf("result = %+v, want an error result for c1", res)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("content %q does not contain %q", res.Content, w)
				}
			}
		})
	}
}

func TestPipelinePanicKeepsStackInFull(t *testing.T) {
	res := testRegistry().Execute(context.Background(), llm.ToolCall{Name: "boom"}, nil, ExecOptions{})
	if !strings.Contains(res.Full, "goroutine") || strings.Contains(res.Content, "goroutine") {
		t.Fatalf("Full should hold the stack and Content should not: %q", res.Content)
	}
}

func TestPipelineTruncatesAndKeepsFull(t *testing.T) {
	reg := testRegistry()
	call := llm.ToolCall{ID: "c", Name: "echo", Arguments: json.RawMessage(`{"text": "0123456789", "count": 10}`)}
	res := reg.Execute(context.Background(), call, nil, ExecOptions{Limits: map[string]Limits{"echo": {MaxChars: 20, Mode: Tail}}})
	if res.IsError || !res.Truncated || len(res.Full) != 100 {
		t.Fatalf("result = %+v", res)
	}
	if !strings.HasPrefix(res.Content, "[WARNING: Tool output was truncated. First 80 characters were removed.") || !strings.HasSuffix(res.Content, "01234567890123456789") {
		t.Fatalf("content = %q", res.Content)
	}
	// Without a session override the fallback limit (30 000) applies.
	res = reg.Execute(context.Background(), call, nil, ExecOptions{})
	if res.Truncated || res.Content != res.Full {
		t.Fatalf("unexpected truncation: %+v", res)
	}
	if tr := res.ToolResult(); tr.ToolCallID != "c" || tr.Content != res.Content {
		t.Fatalf("ToolResult = %+v", tr)
	}
}

func TestPipelineToolLimitsOverrideDefaults(t *testing.T) {
	reg := testRegistry()
	echo, _ := reg.Get("echo")
	echo.Limits = Limits{MaxLines: 2}
	reg.Register(echo)
	res := reg.Execute(context.Background(), llm.ToolCall{Name: "echo", Arguments: json.RawMessage(`{"text": "x\n", "count": 5}`)}, nil, ExecOptions{})
	if !res.Truncated || res.Content != "x\n[... 4 lines omitted ...]\n" {
		t.Fatalf("content = %q", res.Content)
	}
}

func TestCoreDefinitions(t *testing.T) {
	reg := Core()
	want := []string{"read_file", "read_many_files", "write_file", "edit_file", "apply_patch", "shell", "grep", "glob", "list_dir"}
	defs := reg.Definitions()
	if len(defs) != len(want) {
		t.Fatalf("got %d definitions, want %d", len(defs), len(want))
	}
	mutating := map[string]bool{"write_file": true, "edit_file": true, "apply_patch": true, "shell": true}
	for i, d := range defs {
		if d.Name != want[i] {
			t.Errorf("definition %d = %s, want %s", i, d.Name, want[i])
		}
		if d.Description == "" {
			t.Errorf("%s has no description", d.Name)
		}
		if _, err := compileSchema(d.Parameters); err != nil {
			t.Errorf("%s schema: %v", d.Name, err)
		}
		tool, _ := reg.Get(d.Name)
		if tool.Mutates != mutating[d.Name] {
			t.Errorf("%s Mutates = %v", d.Name, tool.Mutates)
		}
	}
}
