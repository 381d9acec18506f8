package anthropic

import (
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// TestWireBodiesGolden: tool choice (auto, none, any, tool) and a response
// format sent as a forced call of a tool named after it, as sent.
func TestWireBodiesGolden(t *testing.T) {
	var enc Encoder
	llmtest.CheckWireBodies(t, "wire_", "claude-sonnet-4-5", func(req llm.Request) ([]byte, error) {
		body, _, err := enc.Encode(req, false)
		return body, err
	})
}
