package gemini

import (
	"testing"

	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// TestWireBodiesGolden: tool choice as toolConfig.functionCallingConfig
// (AUTO, NONE, ANY, ANY with allowedFunctionNames) and a response format
// as responseMimeType and responseJsonSchema, as sent.
func TestWireBodiesGolden(t *testing.T) {
	llmtest.CheckWireBodies(t, "wire_", "gemini-2.5-flash", encode)
}
