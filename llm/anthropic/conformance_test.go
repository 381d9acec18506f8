package anthropic_test

import (
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// TestConformance runs the shared adapter suite: content whole and
// streamed, every failure kind with the retry policy's decisions, cuts,
// stalls, cancellation and the idle watchdog.
func TestConformance(t *testing.T) {
	llmtest.Exercise(t, llmtest.Target{Model: "claude-sonnet-4-5", New: func(t testing.TB, serverURL string, retry llm.RetryPolicy) llm.Client {
		t.Helper()
		c, err := anthropic.New(anthropic.Config{BaseURL: serverURL, APIKey: "sk-ant-test", Retry: retry})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}})
}
