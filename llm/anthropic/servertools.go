package anthropic

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// Provider tools. A request offers Anthropic's own tools as
// llm.ToolDefinition with a ProviderTool (in Request.Tools, or in
// ProviderOptions["anthropic"]["tools"]: see llm.ToolsFor), sent as
// {"type": ..., "name": ..., <params>}: web_search_20250305 (max_uses,
// allowed_domains, blocked_domains, user_location), computer_20250124
// (display_width_px, display_height_px, display_number), text_editor_*
// (name str_replace_based_edit_tool; max_characters), bash_*. The
// computer use types need a beta, which is added to the request's
// beta_headers (toolBetas).
//
// Server tools run at Anthropic: the answer holds a server_tool_use block
// (the query) and a *_tool_result block (what it found). Both become
// llm.KindServerTool parts with the block's JSON on Raw, never tool calls,
// and go back unchanged in the next request, as the API expects.

// toolBetas are the betas a provider tool type needs.
var toolBetas = map[string]string{
	"computer_20250124":    "computer-use-2025-01-24",
	"computer_20241022":    "computer-use-2024-10-22",
	"text_editor_20241022": "computer-use-2024-10-22",
	"bash_20241022":        "computer-use-2024-10-22",
}

// prepareRequest is what every encoding path does first: the request's
// provider tools merged into its tools (llm.ToolsFor), the betas they
// need added to beta_headers, and a ResponseFormat turned into a forced
// answer tool.
func prepareRequest(req llm.Request) (llm.Request, error) {
	defs, err := llm.ToolsFor(req, providerName)
	if err != nil {
		return req, err
	}
	req.Tools = defs
	if req, err = withToolBetas(req); err != nil {
		return req, err
	}
	return answerTool(req)
}

// withToolBetas adds the betas the request's provider tools need to
// ProviderOptions["anthropic"]["beta_headers"], on a copy of the options.
func withToolBetas(req llm.Request) (llm.Request, error) {
	var need []string
	for _, d := range req.Tools {
		if d.Provider != nil {
			if b := toolBetas[d.Provider.Type]; b != "" && !slices.Contains(need, b) {
				need = append(need, b)
			}
		}
	}
	if len(need) == 0 {
		return req, nil
	}
	have, err := req.ProviderOptions.Strings(providerName, "beta_headers")
	if err != nil {
		return req, err
	}
	betas := slices.Clone(have)
	for _, b := range need {
		if !slices.Contains(betas, b) {
			betas = append(betas, b)
		}
	}
	opts := maps.Clone(req.ProviderOptions)
	if opts == nil {
		opts = llm.ProviderOptions{}
	}
	own := maps.Clone(opts[providerName])
	if own == nil {
		own = map[string]any{}
	}
	own["beta_headers"] = betas
	opts[providerName] = own
	req.ProviderOptions = opts
	return req, nil
}

// isServerBlock reports whether a response block is a server tool's use
// or result (server_tool_use, web_search_tool_result, web_fetch_tool_result,
// code_execution_tool_result...).
func isServerBlock(typ string) bool {
	return typ == "server_tool_use" || strings.HasSuffix(typ, "_tool_result") && typ != "tool_result"
}

// serverPart is a server tool block as content.
func serverPart(b *wireBlockIn) llm.ContentPart {
	st := &llm.ServerTool{Type: b.Type, ID: b.ID, Name: b.Name}
	if b.ToolUseID != "" {
		st.ID = b.ToolUseID
	}
	if len(b.Input) > 0 && json.Valid(b.Input) {
		st.Input = b.Input
	}
	return llm.ContentPart{Kind: llm.KindServerTool, ServerTool: st, Provider: providerName, Raw: b.Raw}
}

// serverBlock echoes a server tool block back: ours byte for byte; one
// from another provider, or without its JSON, is dropped (the answer's
// text already carries what it found).
func serverBlock(p llm.ContentPart) (json.RawMessage, bool) {
	if p.Provider != providerName || len(p.Raw) == 0 {
		return nil, false
	}
	return p.Raw, true
}

// checkToolMarks refuses more explicit cache marks on tools than the API
// allows breakpoints.
func checkToolMarks(defs []llm.ToolDefinition) error {
	n := 0
	for _, d := range defs {
		if d.Cache {
			n++
		}
	}
	if n > maxBreakpoints {
		return invalidRequest(fmt.Sprintf("%d tool definitions ask for a cache breakpoint; the API allows %d per request: mark fewer tools", n, maxBreakpoints))
	}
	return nil
}
