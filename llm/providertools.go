package llm

import (
	"encoding/json"
	"fmt"
	"strings"
)

// ProviderTool is a tool the provider defines: its type, as the
// provider's documentation names it, and its parameters. The adapter of
// that provider sends it in the provider's own shape; any other adapter
// refuses a request that carries it.
//
// Two sorts exist. A server-run tool (Anthropic's web_search_* and
// web_fetch_* and code_execution_*, OpenAI's web_search, Gemini's
// google_search, code_execution and url_context) runs at the provider:
// its use and its result come back as KindServerTool content, never as a
// ToolCall, and the loop has nothing to run. A client-run tool
// (Anthropic's computer_*, text_editor_* and bash_*; OpenAI's
// computer_use_preview) is only a schema the model was trained on: the
// model calls it by ToolDefinition.Name as any other tool, and something
// registered under that name must run it; its result goes back in the
// wire's own shape (OpenAI's computer_call_output: see llm/openai).
type ProviderTool struct {
	// Provider is the wire family the tool belongs to: "anthropic"
	// (also on Bedrock and Vertex AI), "openai" (the Responses API) or
	// "gemini".
	Provider string `json:"provider"`
	// Type is the provider's tool type: web_search_20250305,
	// computer_20250124, text_editor_20250728, bash_20250124 (anthropic);
	// web_search, computer_use_preview (openai); google_search,
	// code_execution, url_context (gemini).
	Type string `json:"type"`
	// Params are the tool's own parameters, named as the provider names
	// them and sent beside the type: max_uses, allowed_domains,
	// user_location (web search), display_width_px, display_height_px,
	// display_number (computer use), max_characters (text editor),
	// search_context_size (openai web search), display_width,
	// display_height, environment (openai computer_use_preview).
	Params map[string]any `json:"params,omitempty"`
}

// ServerRun reports whether the provider runs the tool itself (see
// ProviderTool).
func (p ProviderTool) ServerRun() bool {
	switch p.Provider {
	case "anthropic":
		for _, prefix := range []string{"web_search_", "web_fetch_", "code_execution_"} {
			if strings.HasPrefix(p.Type, prefix) {
				return true
			}
		}
		return false
	case "openai":
		return p.Type != "computer_use_preview"
	case "gemini":
		return true
	}
	return false
}

// ServerTool is one block of a server-run tool's work, as the provider
// reported it: the use (the query it ran) or the result (pages found,
// code output). The provider's own JSON is on ContentPart.Raw, so the
// adapter that produced it sends it back unchanged in the next request;
// other adapters drop it.
type ServerTool struct {
	// Type is the provider's block or item type: server_tool_use,
	// web_search_tool_result, web_fetch_tool_result (anthropic),
	// web_search_call (openai), executableCode, codeExecutionResult,
	// groundingMetadata, urlContextMetadata (gemini).
	Type string `json:"type"`
	// ID identifies the use; a result carries the id of the use it answers.
	ID string `json:"id,omitempty"`
	// Name is the tool's name (web_search), on a use.
	Name string `json:"name,omitempty"`
	// Input is what the use asked for ({"query": ...}), when given.
	Input json.RawMessage `json:"input,omitempty"`
}

// ToolsFor returns the tool definitions a request offers the provider
// named: Request.Tools, then the definitions in
// ProviderOptions[provider]["tools"] (a profile's or a session's
// provider tools) merged in by name. A merged entry with a ProviderTool
// replaces the definition of the same name (the provider's typed schema
// of a tool that is also registered to run it); an entry with only a
// name and Cache marks that definition; any other entry is added. Every
// ProviderTool must be the named provider's: a request that carries
// another provider's tool is refused with a clear error.
func ToolsFor(req Request, provider string) ([]ToolDefinition, error) {
	extra, err := req.ProviderOptions.Tools(provider)
	if err != nil {
		return nil, err
	}
	defs := req.Tools
	if len(extra) > 0 {
		defs = mergeTools(req.Tools, extra)
	}
	for _, d := range defs {
		if d.Provider == nil {
			continue
		}
		if d.Provider.Provider != provider {
			return nil, &Error{Kind: ErrInvalidRequest, Provider: provider, Message: fmt.Sprintf(
				"tool %q is a %s tool (%s); this request goes to %s: offer it only to its provider's profile", d.Name, d.Provider.Provider, d.Provider.Type, provider)}
		}
		if d.Provider.Type == "" {
			return nil, &Error{Kind: ErrInvalidRequest, Provider: provider, Message: fmt.Sprintf(
				"provider tool %q has no type: name the provider's tool type, e.g. web_search_20250305", d.Name)}
		}
	}
	return defs, nil
}

// NoProviderTools refuses a request offering provider tools to an
// adapter (the wire format named) that has none.
func NoProviderTools(req Request, provider, wire string) error {
	if v, ok := req.ProviderOptions.Value(provider, "tools"); ok && v != nil {
		return &Error{Kind: ErrInvalidRequest, Provider: provider, Message: wire + " has no provider tools: drop ProviderOptions[" + provider + "][tools]"}
	}
	for _, d := range req.Tools {
		if d.Provider != nil {
			return &Error{Kind: ErrInvalidRequest, Provider: provider, Message: fmt.Sprintf(
				"tool %q is a %s tool (%s); %s has no provider tools: offer it only to its provider's profile", d.Name, d.Provider.Provider, d.Provider.Type, wire)}
		}
	}
	return nil
}

func mergeTools(defs, extra []ToolDefinition) []ToolDefinition {
	out := append([]ToolDefinition(nil), defs...)
	index := make(map[string]int, len(out))
	for i, d := range out {
		index[d.Name] = i
	}
	for _, e := range extra {
		i, ok := index[e.Name]
		switch {
		case !ok || e.Name == "":
			index[e.Name] = len(out)
			out = append(out, e)
		case e.Provider == nil && len(e.Parameters) == 0:
			out[i].Cache = out[i].Cache || e.Cache
		default:
			out[i] = e
		}
	}
	return out
}

// Tools reads ProviderOptions[provider]["tools"]: []ToolDefinition, or the
// same decoded from JSON (a session spec's provider_options), each
// ProviderTool's Provider defaulting to provider.
func (o ProviderOptions) Tools(provider string) ([]ToolDefinition, error) {
	v, ok := o.Value(provider, "tools")
	if !ok || v == nil {
		return nil, nil
	}
	defs, ok := v.([]ToolDefinition)
	if !ok {
		raw, err := json.Marshal(v)
		if err == nil {
			err = json.Unmarshal(raw, &defs)
		}
		if err != nil {
			return nil, optionError(provider, "tools", "a list of tool definitions ({name, provider_tool: {type, params}, cache})", v)
		}
	}
	out := make([]ToolDefinition, len(defs))
	for i, d := range defs {
		if d.Provider != nil {
			pt := *d.Provider
			if pt.Provider == "" {
				pt.Provider = provider
			}
			d.Provider = &pt
		}
		out[i] = d
	}
	return out, nil
}
