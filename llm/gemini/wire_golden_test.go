package gemini

import (
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// TestWireBodiesGolden: tool choice as toolConfig.functionCallingConfig
// (AUTO, NONE, ANY, ANY with allowedFunctionNames) and a response format
// as responseMimeType and responseJsonSchema, as sent.
func TestWireBodiesGolden(t *testing.T) {
	llmtest.CheckWireBodies(t, "wire_", "gemini-2.5-flash", encode)
}

// Gemini 3 takes a response schema beside function calling, so the format
// stays native there; earlier models get the forced function instead.
func TestResponseFormatWithToolsByModel(t *testing.T) {
	for model, native := range map[string]bool{"gemini-3-pro-preview": true, "gemini-2.5-pro": false} {
		var req llm.Request
		for _, c := range llmtest.WireCases(model) {
			if c.Name == "response_format_tools" {
				req = c.Request
			}
		}
		body, err := encode(req)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(body), `"responseJsonSchema"`); got != native || ForcesAnswerTool(req) == native {
			t.Errorf("%s: native schema %v, want %v: %s", model, got, native, body)
		}
	}
}
