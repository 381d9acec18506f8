package sim

import (
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
)

// TestConstraintsRefused: a malformed tool choice or response format is
// answered 400 in the provider's own error shape, with its message, and
// takes no scripted reply.
func TestConstraintsRefused(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.SetDefault(Text("never"))
	cases := []struct{ path, body, want string }{
		{"/v1/responses", `{"model":"m","tool_choice":"sometimes"}`, "tool_choice"},
		{"/v1/responses", `{"model":"m","tools":[{"type":"function","name":"a"}],"tool_choice":{"type":"function","name":"b"}}`, "not in tools"},
		{"/v1/responses", `{"model":"m","text":{"format":{"type":"json_schema","name":"bad name","schema":{}}}}`, "text.format.name"},
		{"/v1/chat/completions", `{"model":"m","response_format":{"type":"json_schema"}}`, "json_schema.name"},
		{"/v1/chat/completions", `{"model":"m","tool_choice":{"type":"function","name":"a"}}`, "tool_choice"},
		{"/v1/messages", `{"model":"m","tool_choice":{"type":"any"}}`, "while providing tools"},
		{"/v1/messages", `{"model":"m","tools":[{"name":"a"}],"tool_choice":{"type":"tool","name":"a"},"thinking":{"type":"enabled","budget_tokens":1024}}`, "Thinking may not be enabled"},
		{"/v1beta/models/g:generateContent", `{"toolConfig":{"functionCallingConfig":{"mode":"AUTO","allowedFunctionNames":["a"]}}}`, "mode is ANY"},
		{"/v1beta/models/g:generateContent", `{"generationConfig":{"responseJsonSchema":{"type":"object"}}}`, "responseMimeType"},
	}
	for _, c := range cases {
		code, body := post(t, s.URL()+c.path, c.body)
		if code != 400 || !strings.Contains(body, c.want) {
			t.Errorf("%s %s: %d %s; want 400 mentioning %s", c.path, c.body, code, body, c.want)
		}
	}
}

// TestConstraintsRecordedAndHonoured: the tool choice and format are
// recorded in llm's words; a forced call answers scripted text as that
// call; a script that breaks the choice is reported as the script's fault.
func TestConstraintsRecordedAndHonoured(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.Enqueue(Text(`{"x":1}`), ToolCall("c1", "a", `{}`))
	code, body := post(t, s.URL()+"/v1/messages", `{"model":"m","tools":[{"name":"a"}],"tool_choice":{"type":"tool","name":"a"}}`)
	if code != 200 || !strings.Contains(body, `"tool_use"`) || !strings.Contains(body, `"x":1`) {
		t.Fatalf("forced call answered %d %s", code, body)
	}
	code, body = post(t, s.URL()+"/v1/chat/completions", `{"model":"m","tools":[{"type":"function","function":{"name":"a"}}],"tool_choice":"none"}`)
	if code != 500 || !strings.Contains(body, "tool choice is none") {
		t.Fatalf("a call under none: %d %s", code, body)
	}
	s.Enqueue(Text(`{}`))
	post(t, s.URL()+"/v1/responses", `{"model":"m","text":{"format":{"type":"json_schema","name":"out","schema":{"type":"object"},"strict":true}}}`)
	reqs := s.Requests()
	if got := reqs[0].Constraints.ToolChoice; got != (llm.ToolChoice{Mode: llm.ToolChoiceNamed, Name: "a"}) {
		t.Errorf("anthropic choice recorded as %+v", got)
	}
	if got := reqs[1].Constraints.ToolChoice.Mode; got != llm.ToolChoiceNone {
		t.Errorf("chat choice recorded as %q", got)
	}
	if f := reqs[2].Constraints.Format; f == nil || f.Name != "out" || !f.Strict || string(f.Schema) != `{"type":"object"}` {
		t.Errorf("responses format recorded as %+v", f)
	}
}
