package openai

import (
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// TestWireBodiesGolden: tool choice (auto, none, required, a named tool)
// and a response format (text.format json_schema), as sent.
func TestWireBodiesGolden(t *testing.T) {
	llmtest.CheckWireBodies(t, "wire_", "gpt-5", func(req llm.Request) ([]byte, error) { return BuildRequest(req, false) })
}
