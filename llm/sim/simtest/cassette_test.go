package simtest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/internal/testenv"
)

// TestLoadCassette reads a recorded cassette of the shared conformance data
// and refuses a file that is not one.
func TestLoadCassette(t *testing.T) {
	conf, err := ConformanceDir()
	if err != nil {
		t.Fatal(err)
	}
	c, err := LoadCassette(conf + "/llm-cassettes/TestOpenAICommon/openai-gpt-4o-mini/tool.yaml")
	if err != nil {
		testenv.SkipOrFatal(t, fmt.Sprintf("conformance data not available: %v", err))
	}
	if len(c.Interactions) != 2 || c.Interactions[0].Request.Method != http.MethodPost || c.Interactions[0].Response.Code != 200 ||
		!strings.Contains(c.Interactions[0].Request.URL, "/chat/completions") || c.Interactions[1].Response.Body == "" {
		t.Fatalf("cassette = %+v", c.Interactions)
	}
	if _, err := LoadCassette(conf + "/README.md"); err == nil {
		t.Fatal("a non-cassette file loaded without error")
	}
}
