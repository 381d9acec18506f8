package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"

	"github.com/agentfleet/agentfleet/llm"
)

// Constraints are what a request asks of its answer's form, read from the
// dialect's own fields and written in llm's vocabulary: the tool choice
// (Mode "" when the request sends none) and the response format when the wire format has one (OpenAI Responses
// text.format, Chat Completions response_format, Gemini
// responseJsonSchema; Anthropic has none, a forced tool call stands for
// it).
type Constraints struct {
	ToolChoice llm.ToolChoice
	Format     *Format
	// Thinking is set when the request turns extended thinking on
	// (Anthropic's thinking.type "enabled").
	Thinking bool
	// ProviderTools are the types of the provider's own tools the request
	// offers, in snake case (web_search, computer_use_preview,
	// google_search, code_execution, url_context); see providertools.go.
	ProviderTools []string
}

// Format is a JSON-schema response format as a request sent it. Name is
// "" on Gemini, whose field has none.
type Format struct {
	Name   string
	Schema json.RawMessage
	Strict bool
}

// constrainer is implemented by the dialects that read Constraints. A
// malformed field is an error the server answers as the provider does: a
// 400 invalid_request naming the field.
type constrainer interface {
	Constraints(body []byte) (Constraints, error)
}

// refusal is the provider's own message for a request it refuses, worded
// as the provider words it (capitals and full stops included).
type refusal string

func (r refusal) Error() string { return string(r) }

func refuse(format string, args ...any) error { return refusal(fmt.Sprintf(format, args...)) }

var formatNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// checkNamed refuses a named tool that is not offered, as every provider
// does.
// The tools are decoded only then: the fleet benchmark sends this server
// thousands of requests a second whose schemas need not be read.
func (c Constraints) checkNamed(field string, tools func() []string) error {
	if c.ToolChoice.Mode != llm.ToolChoiceNamed {
		return nil
	}
	if slices.Contains(tools(), c.ToolChoice.Name) {
		return nil
	}
	return refuse("%s names tool %q, which is not in tools", field, c.ToolChoice.Name)
}

// honour shapes rep to what the request allows, as a model that obeys it
// would answer: a forced call of one named tool turns a text-only reply
// into that call with the text as its arguments (how a response format
// sent as a forced tool is answered). A reply the request forbids (tool
// calls under "none", no call where one is required, a call of another
// tool than the named one) is a mistake in the script: the error says so.
func (c Constraints) honour(rep Reply) (Reply, error) {
	if rep.Failure != nil || rep.Raw != nil {
		return rep, nil
	}
	if err := c.checkProviderTools(rep); err != nil {
		return rep, err
	}
	switch c.ToolChoice.Mode {
	case llm.ToolChoiceNone:
		if len(rep.ToolCalls) > 0 {
			return rep, fmt.Errorf("the scripted reply calls %s but the request's tool choice is none", rep.ToolCalls[0].Name)
		}
	case llm.ToolChoiceNamed:
		if len(rep.ToolCalls) == 0 && rep.Text != "" {
			rep.ToolCalls = []ToolCallReply{{Name: c.ToolChoice.Name, Arguments: rep.Text}}
			rep.Text = ""
		}
		for _, tc := range rep.ToolCalls {
			if tc.Name != c.ToolChoice.Name {
				return rep, fmt.Errorf("the scripted reply calls %s but the request forces a call of %s", tc.Name, c.ToolChoice.Name)
			}
		}
		if len(rep.ToolCalls) == 0 {
			return rep, fmt.Errorf("the scripted reply makes no call but the request forces a call of %s", c.ToolChoice.Name)
		}
	case llm.ToolChoiceRequired:
		if len(rep.ToolCalls) == 0 && len(rep.ComputerCalls) == 0 {
			return rep, fmt.Errorf("the scripted reply makes no call but the request's tool choice requires one")
		}
	}
	return rep, nil
}

// stringOrObject splits a field that is either a JSON string or an object.
func stringOrObject(raw json.RawMessage) (s string, isString bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		_ = json.Unmarshal(raw, &s)
		return s, true
	}
	return "", false
}

// isObject reports whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

// names decodes the tool names of a tools array with name, the element's
// field (a path of keys) holding it.
func names(raw json.RawMessage, path ...string) func() []string {
	return func() []string {
		var tools []map[string]json.RawMessage
		_ = json.Unmarshal(raw, &tools)
		var out []string
		for _, t := range tools {
			v := t[path[0]]
			if len(path) > 1 {
				var inner map[string]json.RawMessage
				_ = json.Unmarshal(v, &inner)
				v = inner[path[1]]
			}
			var n string
			_ = json.Unmarshal(v, &n)
			out = append(out, n)
		}
		return out
	}
}

// hasTools reports whether a tools field is a non-empty array.
func hasTools(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 2 && raw[0] == '['
}

// openAIChoiceWord maps the string tool choices of both OpenAI APIs.
var openAIChoiceWord = map[string]llm.ToolChoiceMode{"auto": llm.ToolChoiceAuto, "none": llm.ToolChoiceNone, "required": llm.ToolChoiceRequired}

// openAIToolChoice reads tool_choice of either OpenAI API: a word, or an
// object whose name is at namePath ("name" or "function.name").
func openAIToolChoice(raw json.RawMessage, nested bool) (llm.ToolChoice, error) {
	if len(raw) == 0 {
		return llm.ToolChoice{}, nil
	}
	if s, ok := stringOrObject(raw); ok {
		if m := openAIChoiceWord[s]; m != "" {
			return llm.ToolChoice{Mode: m}, nil
		}
		return llm.ToolChoice{}, refuse("Invalid value for 'tool_choice': %q is not auto, none or required", s)
	}
	var named struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	_ = json.Unmarshal(raw, &named)
	name, want := named.Name, `{"type": "function", "name": ...}`
	if nested {
		name, want = named.Function.Name, `{"type": "function", "function": {"name": ...}}`
	}
	if named.Type != "function" || name == "" {
		return llm.ToolChoice{}, refuse("Invalid value for 'tool_choice': want %s, got %s", want, raw)
	}
	return llm.ToolChoice{Mode: llm.ToolChoiceNamed, Name: name}, nil
}

// jsonFormat reads a JSON-schema format object of either OpenAI API
// (field names the error's parameter).
func jsonFormat(typ string, schema *Format, field string) (*Format, error) {
	switch typ {
	case "text", "json_object":
		return nil, nil
	case "json_schema":
		if schema == nil || !formatNamePattern.MatchString(schema.Name) {
			return nil, refuse("Invalid '%s.name': it must match ^[a-zA-Z0-9_-]{1,64}$", field)
		}
		if !isObject(schema.Schema) {
			return nil, refuse("Missing required parameter: '%s.schema'", field)
		}
		return schema, nil
	}
	return nil, refuse("Invalid value for '%s.type': %q", field, typ)
}

type wireFormat struct {
	Type   string          `json:"type"`
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict"`
}

// Constraints reads a Responses API body: tool_choice is "auto", "none",
// "required" or {"type": "function", "name": ...}; text.format is
// {"type": "text"}, {"type": "json_object"} or {"type": "json_schema",
// "name", "schema", "strict"}, name and schema required.
func (openAIDialect) Constraints(body []byte) (Constraints, error) {
	f := topFields(body, "tools", "tool_choice", "text", "input", "truncation")
	var c Constraints
	var err error
	if err := openAIProviderTools(f, &c); err != nil {
		return c, err
	}
	if c.ToolChoice, err = openAIToolChoice(f["tool_choice"], false); err != nil {
		return c, err
	}
	if raw := f["text"]; len(raw) > 0 {
		var text struct {
			Format *wireFormat `json:"format"`
		}
		if err := json.Unmarshal(raw, &text); err != nil {
			return c, refuse("Invalid type for 'text': %v", err)
		}
		if wf := text.Format; wf != nil {
			if c.Format, err = jsonFormat(wf.Type, &Format{Name: wf.Name, Schema: wf.Schema, Strict: wf.Strict}, "text.format"); err != nil {
				return c, err
			}
		}
	}
	return c, c.checkNamed("tool_choice", names(f["tools"], "name"))
}

// Constraints reads a Chat Completions body: tool_choice is "auto",
// "none", "required" or {"type": "function", "function": {"name": ...}};
// response_format is {"type": "text"}, {"type": "json_object"} or
// {"type": "json_schema", "json_schema": {"name", "schema", "strict"}},
// name required.
func (chatCompatDialect) Constraints(body []byte) (Constraints, error) {
	f := topFields(body, "tools", "tool_choice", "response_format")
	var c Constraints
	var err error
	if c.ToolChoice, err = openAIToolChoice(f["tool_choice"], true); err != nil {
		return c, err
	}
	if raw := f["response_format"]; len(raw) > 0 {
		var rf struct {
			Type       string      `json:"type"`
			JSONSchema *wireFormat `json:"json_schema"`
		}
		if err := json.Unmarshal(raw, &rf); err != nil {
			return c, refuse("Invalid type for 'response_format': %v", err)
		}
		var sf *Format
		if js := rf.JSONSchema; js != nil {
			sf = &Format{Name: js.Name, Schema: js.Schema, Strict: js.Strict}
		}
		if c.Format, err = jsonFormat(rf.Type, sf, "response_format.json_schema"); err != nil {
			return c, err
		}
	}
	return c, c.checkNamed("tool_choice", names(f["tools"], "function", "name"))
}

// Constraints reads a Messages API body: tool_choice is {"type": "auto" |
// "any" | "none" | "tool", "name" (with tool)}, only beside tools; a
// forced choice (any, tool) with thinking enabled is refused, as the API
// does.
func (anthropicDialect) Constraints(body []byte) (Constraints, error) {
	f := topFields(body, "tools", "tool_choice", "thinking")
	var c Constraints
	anthropicToolMemo.apply(f["tools"], &c)
	if raw := f["thinking"]; len(raw) > 0 {
		var th struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(raw, &th)
		c.Thinking = th.Type == "enabled"
	}
	raw := f["tool_choice"]
	if len(raw) == 0 {
		return c, nil
	}
	var tc struct {
		Type string `json:"type"`
		Name string `json:"name"`
	}
	if err := json.Unmarshal(raw, &tc); err != nil {
		return c, refuse("tool_choice: Input should be an object: %v", err)
	}
	switch tc.Type {
	case "auto":
		c.ToolChoice.Mode = llm.ToolChoiceAuto
	case "none":
		c.ToolChoice.Mode = llm.ToolChoiceNone
	case "any":
		c.ToolChoice.Mode = llm.ToolChoiceRequired
	case "tool":
		if tc.Name == "" {
			return c, refuse("tool_choice.tool.name: Field required")
		}
		c.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceNamed, Name: tc.Name}
	default:
		return c, refuse("tool_choice: Input tag %q does not match any of the expected tags: 'auto', 'any', 'tool', 'none'", tc.Type)
	}
	if !hasTools(f["tools"]) {
		return c, refuse("tool_choice may only be specified while providing tools.")
	}
	if m := c.ToolChoice.Mode; c.Thinking && (m == llm.ToolChoiceRequired || m == llm.ToolChoiceNamed) {
		return c, refuse("Thinking may not be enabled when tool_choice forces tool use.")
	}
	return c, c.checkNamed("tool_choice.name", names(f["tools"], "name"))
}

// geminiModes maps functionCallingConfig.mode.
var geminiModes = map[string]llm.ToolChoiceMode{"AUTO": llm.ToolChoiceAuto, "NONE": llm.ToolChoiceNone, "ANY": llm.ToolChoiceRequired}

// Constraints reads a generateContent body: toolConfig.functionCallingConfig
// has mode AUTO, NONE or ANY and allowedFunctionNames (only with ANY; one
// name is a named choice); generationConfig.responseJsonSchema needs
// responseMimeType application/json.
func (geminiDialect) Constraints(body []byte) (Constraints, error) {
	f := topFields(body, "tools", "toolConfig", "generationConfig")
	var c Constraints
	geminiToolMemo.apply(f["tools"], &c)
	if raw := f["toolConfig"]; len(raw) > 0 {
		var tc struct {
			FunctionCallingConfig struct {
				Mode                 string   `json:"mode"`
				AllowedFunctionNames []string `json:"allowedFunctionNames"`
			} `json:"functionCallingConfig"`
		}
		if err := json.Unmarshal(raw, &tc); err != nil {
			return c, refuse("Invalid JSON payload received. Unknown name or type at 'tool_config': %v", err)
		}
		fc := tc.FunctionCallingConfig
		if c.ToolChoice.Mode = geminiModes[fc.Mode]; c.ToolChoice.Mode == "" {
			return c, refuse("Invalid value at 'tool_config.function_calling_config.mode' (%q)", fc.Mode)
		}
		switch n := len(fc.AllowedFunctionNames); {
		case n > 0 && fc.Mode != "ANY":
			return c, refuse("allowed_function_names may only be set when the function calling mode is ANY")
		case n == 1:
			c.ToolChoice = llm.ToolChoice{Mode: llm.ToolChoiceNamed, Name: fc.AllowedFunctionNames[0]}
		}
	}
	if raw := f["generationConfig"]; len(raw) > 0 {
		var g struct {
			ResponseMimeType   string          `json:"responseMimeType"`
			ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		}
		if err := json.Unmarshal(raw, &g); err != nil {
			return c, refuse("Invalid JSON payload received. Unknown name or type at 'generation_config': %v", err)
		}
		if len(g.ResponseJSONSchema) > 0 {
			if g.ResponseMimeType != "application/json" {
				return c, refuse("responseJsonSchema requires responseMimeType application/json, got %q", g.ResponseMimeType)
			}
			c.Format = &Format{Schema: g.ResponseJSONSchema}
		}
	}
	return c, c.checkNamed("allowed_function_names", func() []string {
		var tools []struct {
			FunctionDeclarations []struct {
				Name string `json:"name"`
			} `json:"functionDeclarations"`
		}
		_ = json.Unmarshal(f["tools"], &tools)
		var out []string
		for _, t := range tools {
			for _, d := range t.FunctionDeclarations {
				out = append(out, d.Name)
			}
		}
		return out
	})
}
