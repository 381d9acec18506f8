package chatcompat_test

import (
	"strings"
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

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  chatcompat.Config
		want string
	}{
		{chatcompat.Config{}, "Config.BaseURL is empty"},
		{chatcompat.Config{BaseURL: "ftp://x"}, "Config.BaseURL must be an http(s) URL"},
		{chatcompat.Config{BaseURL: "localhost:11434/v1"}, "Config.BaseURL must be an http(s) URL"},
	} {
		if _, err := chatcompat.New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", c.cfg, err, c.want)
		}
	}
}
