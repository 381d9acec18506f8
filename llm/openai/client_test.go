package openai_test

import (
	"strings"
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

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  openai.Config
		want string
	}{
		{openai.Config{}, "no API key"},
		{openai.Config{APIKey: "k", BaseURL: "ftp://x"}, "Config.BaseURL must be an http(s) URL"},
		{openai.Config{APIKey: "k", BaseURL: "localhost:8080/v1"}, "Config.BaseURL must be an http(s) URL"},
	} {
		if _, err := openai.New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", c.cfg, err, c.want)
		}
	}
}
