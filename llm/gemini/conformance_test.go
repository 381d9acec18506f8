package gemini_test

import (
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/gemini"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// TestConformance runs the shared adapter suite: content whole and
// streamed, every failure kind with the retry policy's decisions, cuts,
// stalls, cancellation and the idle watchdog.
func TestConformance(t *testing.T) {
	llmtest.Exercise(t, llmtest.Target{Model: "gemini-2.5-flash", New: func(t testing.TB, serverURL string, retry llm.RetryPolicy) llm.Client {
		t.Helper()
		c, err := gemini.New(gemini.Config{BaseURL: serverURL, APIKey: "AIza-test", Retry: retry})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}})
}
