package anthropic

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// defaultMaxTokens is max_tokens when Request.MaxOutputTokens is 0. The
// Messages API requires the field.
const defaultMaxTokens = 8192

// effortBudgets maps Request.ReasoningEffort to thinking.budget_tokens.
// 1024 is the smallest budget the API accepts.
var effortBudgets = map[string]int{
	"minimal": 1024,
	"low":     1024,
	"medium":  4096,
	"high":    16384,
	"xhigh":   32768,
}

// emptyObject stands in for missing or unparsable tool arguments and for a
// tool without a parameter schema.
var emptyObject = json.RawMessage(`{}`)

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// answerTool sends a ResponseFormat as a forced call of a tool with its
// schema (the Messages API has no response format of its own).
func answerTool(req llm.Request) (llm.Request, error) {
	out, err := llm.AsAnswerTool(req)
	if err != nil {
		return req, invalidRequest(err.Error())
	}
	return out, nil
}

// buildRequest turns a unified request into a Messages API body.
func buildRequest(req llm.Request, stream bool) (*wireRequest, error) {
	if req.Model == "" {
		return nil, invalidRequest("Request.Model is empty: name a Claude model, e.g. claude-sonnet-4-5")
	}
	if err := llm.CheckToolChoice(req); err != nil {
		return nil, invalidRequest(err.Error())
	}
	budget, err := thinkingBudget(req)
	if err != nil {
		return nil, err
	}
	if m := req.ToolChoice.Mode; m == llm.ToolChoiceRequired || m == llm.ToolChoiceNamed {
		// The API refuses extended thinking with a forced tool call.
		budget = 0
	}
	w := &wireRequest{
		wireHead: wireHead{Model: req.Model, MaxTokens: req.MaxOutputTokens},
		wireTail: wireTail{Temperature: req.Temperature, Stream: stream},
	}
	if w.MaxTokens <= 0 {
		w.MaxTokens = defaultMaxTokens
	}
	if budget > 0 {
		w.Thinking = &wireThinking{Type: "enabled", BudgetTokens: budget}
		if w.MaxTokens <= budget {
			// The budget counts against max_tokens; keep the requested
			// allowance for the answer on top of it.
			w.MaxTokens += budget
		}
		// The API refuses any temperature but 1 while thinking.
		w.Temperature = nil
	}
	w.System, w.Messages = convertMessages(req.Messages)
	if len(w.Messages) == 0 {
		return nil, invalidRequest("Request.Messages has no user or assistant content: add at least one user message")
	}
	if err := checkToolMarks(req.Tools); err != nil {
		return nil, err
	}
	w.Tools = convertTools(req.Tools)
	if w.ToolChoice, err = convertToolChoice(req.ToolChoice, len(w.Tools) > 0); err != nil {
		return nil, err
	}
	cache, err := promptCacheOn(req)
	if cache {
		markCacheBreakpoints(w)
	}
	return w, err
}

// thinkingBudget returns budget_tokens, 0 for no extended thinking. The
// provider option thinking_budget wins over ReasoningEffort; 0 there turns
// thinking off.
func thinkingBudget(req llm.Request) (int, error) {
	n, ok, err := req.ProviderOptions.Int(providerName, "thinking_budget")
	if err != nil {
		return 0, err
	}
	if ok {
		if n < 0 {
			return 0, invalidRequest(fmt.Sprintf("ProviderOptions[anthropic][thinking_budget] must be >= 0, got %d", n))
		}
		return n, nil
	}
	switch effort := strings.ToLower(req.ReasoningEffort); effort {
	case "", "none":
		return 0, nil
	default:
		b, known := effortBudgets[effort]
		if !known {
			return 0, invalidRequest(fmt.Sprintf("Request.ReasoningEffort %q is not one of minimal, low, medium, high, xhigh", req.ReasoningEffort))
		}
		return b, nil
	}
}

// convertMessages hoists system text into system blocks and maps the rest to
// user and assistant turns, merging neighbours with the same role as the API
// requires alternating turns.
func convertMessages(msgs []llm.Message) ([]textBlock, []wireMessage) {
	var system []textBlock
	out := make([]wireMessage, 0, len(msgs))
	for i := range msgs {
		m := &msgs[i]
		if m.Role == llm.RoleSystem {
			for _, p := range m.Content {
				if p.Kind == llm.KindText && p.Text != "" {
					system = append(system, textBlock{Type: "text", Text: p.Text})
				}
			}
			continue
		}
		role := "user"
		if m.Role == llm.RoleAssistant {
			role = "assistant"
		}
		blocks := convertParts(m.Content)
		if len(blocks) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, wireMessage{Role: role, Content: blocks})
	}
	return system, out
}

func convertParts(parts []llm.ContentPart) []any {
	blocks := make([]any, 0, len(parts))
	for _, p := range parts {
		switch p.Kind {
		case llm.KindText:
			if p.Text != "" {
				blocks = append(blocks, textBlock{Type: "text", Text: p.Text})
			}
		case llm.KindImage:
			if p.Image != nil {
				blocks = append(blocks, convertImage(*p.Image))
			}
		case llm.KindToolCall:
			if p.ToolCall != nil {
				blocks = append(blocks, toolUseBlock{
					Type: "tool_use", ID: p.ToolCall.ID, Name: p.ToolCall.Name,
					Input: toolInput(*p.ToolCall),
				})
			}
		case llm.KindToolResult:
			if p.ToolResult != nil {
				blocks = append(blocks, convertToolResult(*p.ToolResult))
			}
		case llm.KindReasoning:
			if b, ok := reasoningBlock(p); ok {
				blocks = append(blocks, b)
			}
		case llm.KindServerTool:
			if b, ok := serverBlock(p); ok {
				blocks = append(blocks, b)
			}
		}
	}
	return blocks
}

// toolInput is the call's arguments as a JSON object. Arguments that did not
// parse are sent as {} (the model sees the error in the tool result).
func toolInput(c llm.ToolCall) json.RawMessage {
	if len(c.Arguments) == 0 || c.ArgumentsError != "" || !json.Valid(c.Arguments) {
		return emptyObject
	}
	return c.Arguments
}

func convertToolResult(r llm.ToolResult) toolResultBlock {
	b := toolResultBlock{Type: "tool_result", ToolUseID: r.ToolCallID, IsError: r.IsError}
	if r.Content != "" {
		b.Content = append(b.Content, textBlock{Type: "text", Text: r.Content})
	}
	for _, img := range r.Images {
		b.Content = append(b.Content, convertImage(img))
	}
	return b
}

func convertImage(img llm.Image) imageBlock {
	if img.URL != "" && len(img.Data) == 0 {
		return imageBlock{Type: "image", Source: imageSource{Type: "url", URL: img.URL}}
	}
	return imageBlock{Type: "image", Source: imageSource{
		Type: "base64", MediaType: img.MediaType,
		Data: base64.StdEncoding.EncodeToString(img.Data),
	}}
}

// reasoningBlock echoes thinking back. Our own raw block goes back byte for
// byte; a signed or redacted Reasoning without raw is rebuilt. Reasoning from
// another provider, or unsigned, cannot be verified by the API and is dropped.
func reasoningBlock(p llm.ContentPart) (any, bool) {
	if p.Provider != "" && p.Provider != providerName {
		return nil, false
	}
	if len(p.Raw) > 0 {
		return p.Raw, true
	}
	r := p.Reasoning
	switch {
	case r == nil:
		return nil, false
	case r.Redacted && r.Data != "":
		return redactedThinkingBlock{Type: "redacted_thinking", Data: r.Data}, true
	case r.Signature != "":
		return thinkingBlock{Type: "thinking", Thinking: r.Text, Signature: r.Signature}, true
	}
	return nil, false
}

func convertTools(defs []llm.ToolDefinition) []wireTool {
	if len(defs) == 0 {
		return nil
	}
	tools := make([]wireTool, len(defs))
	for i, d := range defs {
		if d.Provider != nil {
			tools[i] = wireTool{Name: d.Name, Type: d.Provider.Type, Params: d.Provider.Params}
		} else {
			schema := d.Parameters
			if len(schema) == 0 {
				schema = emptySchema
			}
			tools[i] = wireTool{Name: d.Name, Description: d.Description, InputSchema: schema}
		}
		if d.Cache {
			tools[i].CacheControl = ephemeral
		}
	}
	return tools
}

func convertToolChoice(c llm.ToolChoice, haveTools bool) (*wireToolChoice, error) {
	if !haveTools {
		return nil, nil
	}
	parallel := false // disable_parallel_tool_use: the model may call several tools
	switch c.Mode {
	case "", llm.ToolChoiceAuto:
		return &wireToolChoice{Type: "auto", DisableParallelToolUse: &parallel}, nil
	case llm.ToolChoiceRequired:
		return &wireToolChoice{Type: "any", DisableParallelToolUse: &parallel}, nil
	case llm.ToolChoiceNone:
		return &wireToolChoice{Type: "none"}, nil
	case llm.ToolChoiceNamed:
		if c.Name == "" {
			return nil, invalidRequest("Request.ToolChoice.Name is empty: name the tool the model must call")
		}
		return &wireToolChoice{Type: "tool", Name: c.Name, DisableParallelToolUse: &parallel}, nil
	}
	return nil, invalidRequest(fmt.Sprintf("Request.ToolChoice.Mode %q is not auto, none, required or named", c.Mode))
}

func invalidRequest(msg string) *llm.Error {
	return &llm.Error{Kind: llm.ErrInvalidRequest, Provider: providerName, Message: msg}
}

// betaHeader joins ProviderOptions[anthropic][beta_headers] for the
// anthropic-beta header.
func betaHeader(opts llm.ProviderOptions) (string, error) {
	betas, err := opts.Strings(providerName, "beta_headers")
	return strings.Join(betas, ","), err
}
