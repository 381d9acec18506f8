package chatcompat

import (
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
)

// Chat Completions has no provider tools: a request offering one, in its
// tools or its options, is refused saying so rather than sent without it.
func TestProviderToolsRefused(t *testing.T) {
	base := llm.Request{Model: "m", Messages: []llm.Message{llm.UserMessage("hi")}}
	withTool := base
	withTool.Tools = []llm.ToolDefinition{{Name: "web_search", Provider: &llm.ProviderTool{Provider: "openai", Type: "web_search"}}}
	withOption := base
	withOption.ProviderOptions = llm.ProviderOptions{ProviderName: {"tools": []any{map[string]any{"name": "x"}}}}
	for name, req := range map[string]llm.Request{"tool": withTool, "option": withOption} {
		if _, err := BuildRequest(req, false); err == nil || !strings.Contains(err.Error(), "Chat Completions has no provider tools") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
