package chatcompat

import (
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// TestWireBodiesGolden: tool choice (auto, none, required, a named tool)
// and a response format (response_format json_schema), as sent.
func TestWireBodiesGolden(t *testing.T) {
	llmtest.CheckWireBodies(t, "wire_", "qwen3:8b", func(req llm.Request) ([]byte, error) { return BuildRequest(req, false) })
}
