package worker

import (
	"strings"
	"testing"
)

// The start-up log names every profile the worker serves and its model, so
// an operator sees at once what a task without a profile will meet.
func TestConfigSaysWhatItServes(t *testing.T) {
	cfg := Config{Providers: map[string]ProviderConfig{"openai": {DefaultModel: "gpt-5.2-codex"}, "anthropic": {Provider: "bedrock"}}}
	got := strings.Join(cfg.serves(), "; ")
	want := "anthropic (the profile's default model via bedrock); openai (gpt-5.2-codex via openai)"
	if got != want {
		t.Fatalf("serves %q, want %q", got, want)
	}
}
