package anthropic

import (
	"testing"

	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// FuzzDecodeStream: no response body, recorded or mangled, makes the
// stream decoder panic or end without exactly one finish or error.
func FuzzDecodeStream(f *testing.F) { llmtest.FuzzDecoder(f, decodeStream, "TestAnthropic") }
