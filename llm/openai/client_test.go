package openai_test

import (
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/llmtest"
	"github.com/agentfleet/agentfleet/llm/openai"
)

func newClient(t testing.TB, serverURL string, retry llm.RetryPolicy) llm.Client {
	t.Helper()
	c, err := openai.New(openai.Config{BaseURL: serverURL + "/v1", APIKey: "sk-test", Retry: retry})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestConformance(t *testing.T) {
	llmtest.Exercise(t, llmtest.Target{Model: "gpt-5", New: newClient})
}
