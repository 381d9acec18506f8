package chatcompat_test

import (
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/chatcompat"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

func newClient(t testing.TB, serverURL string, retry llm.RetryPolicy) llm.Client {
	t.Helper()
	c, err := chatcompat.New(chatcompat.Config{BaseURL: serverURL + "/v1", Retry: retry})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestConformance(t *testing.T) {
	llmtest.Exercise(t, llmtest.Target{Model: "qwen3:8b", New: newClient, NoReasoningSignature: true})
}
