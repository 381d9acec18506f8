package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// effortBudgets maps Request.ReasoningEffort to thinkingBudget for models
// before Gemini 3 (24576 is the most Gemini 2.5 Flash accepts).
var effortBudgets = map[string]int{
	"none":    0,
	"minimal": 128,
	"low":     1024,
	"medium":  8192,
	"high":    24576,
	"xhigh":   32768,
}

// effortLevels maps Request.ReasoningEffort to thinkingLevel for Gemini 3
// models, which take a level instead of a budget.
var effortLevels = map[string]string{
	"minimal": "MINIMAL",
	"low":     "LOW",
	"medium":  "MEDIUM",
	"high":    "HIGH",
	"xhigh":   "HIGH",
}

var emptyObject = json.RawMessage(`{}`)

// buildRequest turns a unified request into a generateContent body.
func buildRequest(req llm.Request) (*wireRequest, error) {
	if req.Model == "" {
		return nil, invalidRequest("Request.Model is empty: name a Gemini model, e.g. gemini-2.5-flash")
	}
	w := &wireRequest{}
	var err error
	if ForcesAnswerTool(req) {
		if req, err = llm.AsAnswerTool(req); err != nil {
			return nil, invalidRequest(err.Error())
		}
		req.ResponseFormat = nil // carried by the function now
	}
	if w.SystemInstruction, w.Contents, err = convertMessages(req.Messages); err != nil {
		return nil, err
	}
	if len(w.Contents) == 0 {
		return nil, invalidRequest("Request.Messages has no user or assistant content: add at least one user message")
	}
	if err := llm.CheckToolChoice(req); err != nil {
		return nil, invalidRequest(err.Error())
	}
	defs, err := llm.ToolsFor(req, providerName)
	if err != nil {
		return nil, err
	}
	if w.Tools, err = convertTools(defs); err != nil {
		return nil, err
	}
	if w.ToolConfig, err = convertToolChoice(req.ToolChoice, hasFunctions(w.Tools)); err != nil {
		return nil, err
	}
	if w.GenerationConfig, err = generationConfig(req); err != nil {
		return nil, err
	}
	w.SafetySettings, err = safetySettings(req.ProviderOptions)
	return w, err
}

func generationConfig(req llm.Request) (*wireGenConfig, error) {
	thinking, err := thinkingConfig(req)
	if err != nil {
		return nil, err
	}
	f := req.ResponseFormat
	if f != nil {
		if err := f.Check(); err != nil {
			return nil, invalidRequest(err.Error())
		}
	}
	if req.MaxOutputTokens <= 0 && req.Temperature == nil && thinking == nil && f == nil {
		return nil, nil
	}
	gc := &wireGenConfig{MaxOutputTokens: max(req.MaxOutputTokens, 0), Temperature: req.Temperature, ThinkingConfig: thinking}
	if f != nil {
		// responseJsonSchema takes JSON Schema as it is (responseSchema
		// would need the OpenAPI subset of schema.go); it has no name and
		// no strictness, decoding is always constrained.
		gc.ResponseMimeType, gc.ResponseJSONSchema = "application/json", f.Schema
	}
	return gc, nil
}

// thinkingConfig derives thinkingConfig from the provider options
// (thinking_budget, include_thoughts) and ReasoningEffort. Thoughts are
// included whenever thinking is on, unless include_thoughts is false.
func thinkingConfig(req llm.Request) (*wireThinkingConfig, error) {
	opts := req.ProviderOptions
	budget, haveBudget, err := opts.Int(providerName, "thinking_budget")
	if err != nil {
		return nil, err
	}
	include, haveInclude, err := opts.Bool(providerName, "include_thoughts")
	if err != nil {
		return nil, err
	}
	tc := &wireThinkingConfig{}
	effort := strings.ToLower(req.ReasoningEffort)
	switch {
	case haveBudget:
		tc.ThinkingBudget = &budget
	case effort == "":
	case isGemini3(req.Model) && effortLevels[effort] != "":
		tc.ThinkingLevel = effortLevels[effort]
	default:
		b, ok := effortBudgets[effort]
		if !ok {
			return nil, invalidRequest(fmt.Sprintf("Request.ReasoningEffort %q is not one of none, minimal, low, medium, high, xhigh", req.ReasoningEffort))
		}
		tc.ThinkingBudget = &b
	}
	thinkingOn := tc.ThinkingLevel != "" || (tc.ThinkingBudget != nil && *tc.ThinkingBudget != 0)
	tc.IncludeThoughts = thinkingOn
	if haveInclude {
		tc.IncludeThoughts = include
	}
	if tc.ThinkingBudget == nil && tc.ThinkingLevel == "" && !tc.IncludeThoughts {
		return nil, nil
	}
	return tc, nil
}

func isGemini3(model string) bool {
	return strings.HasPrefix(strings.TrimPrefix(model, "models/"), "gemini-3")
}

// safetySettings passes ProviderOptions["gemini"]["safety_settings"] through:
// a list of {"category": ..., "threshold": ...} objects.
func safetySettings(opts llm.ProviderOptions) ([]json.RawMessage, error) {
	v, ok := opts.Value(providerName, "safety_settings")
	if !ok || v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	var list []json.RawMessage
	if err == nil {
		err = json.Unmarshal(b, &list)
	}
	if err != nil {
		return nil, invalidRequest(fmt.Sprintf(`ProviderOptions["gemini"]["safety_settings"] must be a list of {"category","threshold"} objects: %v`, err))
	}
	return list, nil
}

// converter carries what converting one history needs: the tool names by
// call id, built on first use to name tool results that lack one.
type converter struct {
	msgs  []llm.Message
	names map[string]string
}

// convertMessages moves system text to systemInstruction and maps the rest
// to user and model turns, merging neighbours with the same role.
func convertMessages(msgs []llm.Message) (*wireContent, []wireContent, error) {
	c := converter{msgs: msgs}
	var system *wireContent
	out := make([]wireContent, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		if m.Role == llm.RoleSystem {
			if system == nil {
				system = &wireContent{Role: "user"}
			}
			for _, p := range m.Content {
				if p.Kind == llm.KindText && p.Text != "" {
					system.Parts = append(system.Parts, textPart{Text: p.Text})
				}
			}
			continue
		}
		role := "user"
		if m.Role == llm.RoleAssistant {
			role = "model"
		}
		parts, err := c.parts(m.Content)
		if err != nil {
			return nil, nil, err
		}
		if len(parts) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Parts = append(out[n-1].Parts, parts...)
			continue
		}
		out = append(out, wireContent{Role: role, Parts: parts})
	}
	if system != nil && len(system.Parts) == 0 {
		system = nil
	}
	return system, out, nil
}

func (c *converter) parts(content []llm.ContentPart) ([]any, error) {
	parts := make([]any, 0, len(content))
	for _, p := range content {
		switch p.Kind {
		case llm.KindText:
			sig := ownSignature(p)
			if p.Text != "" || sig != "" {
				parts = append(parts, textPart{Text: p.Text, ThoughtSignature: sig})
			}
		case llm.KindImage:
			if p.Image != nil {
				parts = append(parts, convertImage(*p.Image))
			}
		case llm.KindToolCall:
			if tc := p.ToolCall; tc != nil {
				parts = append(parts, functionCallPart{
					FunctionCall:     wireFunctionCall{ID: tc.ID, Name: tc.Name, Args: callArgs(*tc)},
					ThoughtSignature: tc.Signature,
				})
			}
		case llm.KindToolResult:
			if tr := p.ToolResult; tr != nil {
				part, err := c.toolResult(*tr)
				if err != nil {
					return nil, err
				}
				parts = append(parts, part)
				for _, img := range tr.Images {
					parts = append(parts, convertImage(img))
				}
			}
		case llm.KindReasoning:
			// Thought summaries are not sent back; only a signed thought
			// (which the API asks to be returned) is.
			if r := p.Reasoning; r != nil && r.Signature != "" && (p.Provider == providerName || p.Provider == "") {
				parts = append(parts, textPart{Text: r.Text, Thought: true, ThoughtSignature: r.Signature})
			}
		case llm.KindServerTool:
			// Code the model ran (executableCode, codeExecutionResult) goes
			// back as it came; another provider's is dropped.
			// Search and URL metadata have no Raw: they are not parts.
			if p.Provider == providerName && len(p.Raw) > 0 {
				parts = append(parts, p.Raw)
			}
		}
	}
	return parts, nil
}

// ownSignature is a text part's thoughtSignature unless another adapter
// wrote the part.
func ownSignature(p llm.ContentPart) string {
	if p.Provider != "" && p.Provider != providerName {
		return ""
	}
	return p.Signature
}

// callArgs is the call's arguments as a JSON object; arguments that did not
// parse are sent as {} (the model sees the error in the tool result).
func callArgs(tc llm.ToolCall) json.RawMessage {
	a := bytes.TrimSpace(tc.Arguments)
	if len(a) == 0 || a[0] != '{' || tc.ArgumentsError != "" || !json.Valid(a) {
		return emptyObject
	}
	return tc.Arguments
}

// toolResult is a functionResponse: {"result": content}, or {"error":
// content} when the tool failed. The name comes from the result, else from
// the call with the same id in the history.
func (c *converter) toolResult(tr llm.ToolResult) (functionResponsePart, error) {
	name := tr.Name
	if name == "" {
		name = c.callName(tr.ToolCallID)
	}
	if name == "" {
		return functionResponsePart{}, invalidRequest(fmt.Sprintf(
			"tool result for call %q has no Name and no tool call with that id is in the history: set ToolResult.Name", tr.ToolCallID))
	}
	key := "result"
	if tr.IsError {
		key = "error"
	}
	return functionResponsePart{FunctionResponse: wireFunctionResponse{
		ID: tr.ToolCallID, Name: name, Response: map[string]any{key: tr.Content},
	}}, nil
}

func (c *converter) callName(id string) string {
	if c.names == nil {
		c.names = map[string]string{}
		for _, m := range c.msgs {
			for _, tc := range m.ToolCalls() {
				c.names[tc.ID] = tc.Name
			}
		}
	}
	return c.names[id]
}

func convertImage(img llm.Image) any {
	if len(img.Data) == 0 && img.URL != "" {
		return fileDataPart{FileData: wireFileData{MimeType: img.MediaType, FileURI: img.URL}}
	}
	return inlineDataPart{InlineData: wireBlob{MimeType: img.MediaType, Data: img.Data}}
}

// convertTools sends the functions as one tool of function declarations,
// then each built-in tool (google_search, code_execution, url_context) as
// a tool of its own: {"googleSearch": {params}}.
func convertTools(defs []llm.ToolDefinition) ([]wireTool, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	var decls []wireFunctionDeclaration
	var builtins []wireTool
	for _, d := range defs {
		if d.Provider != nil {
			params := d.Provider.Params
			if params == nil {
				params = map[string]any{}
			}
			builtins = append(builtins, wireTool{Builtin: map[string]any{camelCase(d.Provider.Type): params}})
			continue
		}
		params, err := convertSchema(d.Name, d.Parameters)
		if err != nil {
			return nil, err
		}
		decls = append(decls, wireFunctionDeclaration{Name: d.Name, Description: d.Description, Parameters: params})
	}
	var tools []wireTool
	if len(decls) > 0 {
		tools = append(tools, wireTool{FunctionDeclarations: decls})
	}
	return append(tools, builtins...), nil
}

// hasFunctions reports whether tools declare any function (a tool config
// applies only to functions).
func hasFunctions(tools []wireTool) bool {
	for _, t := range tools {
		if len(t.FunctionDeclarations) > 0 {
			return true
		}
	}
	return false
}

// camelCase turns a documented snake_case tool type (google_search) into
// the field name of the REST Tool object (googleSearch).
func camelCase(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

func convertToolChoice(c llm.ToolChoice, haveTools bool) (*wireToolConfig, error) {
	if !haveTools {
		return nil, nil
	}
	fc := wireFunctionCallingConfig{}
	switch c.Mode {
	case "", llm.ToolChoiceAuto:
		fc.Mode = "AUTO"
	case llm.ToolChoiceNone:
		fc.Mode = "NONE"
	case llm.ToolChoiceRequired:
		fc.Mode = "ANY"
	case llm.ToolChoiceNamed:
		if c.Name == "" {
			return nil, invalidRequest("Request.ToolChoice.Name is empty: name the tool the model must call")
		}
		fc.Mode, fc.AllowedFunctionNames = "ANY", []string{c.Name}
	default:
		return nil, invalidRequest(fmt.Sprintf("Request.ToolChoice.Mode %q is not auto, none, required or named", c.Mode))
	}
	return &wireToolConfig{FunctionCallingConfig: fc}, nil
}

func invalidRequest(msg string) *llm.Error {
	return &llm.Error{Kind: llm.ErrInvalidRequest, Provider: providerName, Message: msg}
}
