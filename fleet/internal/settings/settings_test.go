package settings_test

import (
	"slices"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/settings"
	"github.com/agentfleet/agentfleet/profiles"
)

// The spec's Anthropic betas are added to the profile's own (interleaved
// thinking with an effort), and echo_reasoning reaches the chatcompat
// options; no options leave the profile as it is.
func TestProviderOptionsMerge(t *testing.T) {
	p := profiles.Anthropic("claude-sonnet-4")
	if got := settings.Profile(p, nil); got != p {
		t.Fatal("a spec without provider options changed the profile")
	}
	echo := false
	tp := settings.Profile(p, &fleet.ProviderOptions{AnthropicBeta: []string{"context-1m-2025-08-07"}, EchoReasoning: &echo})
	o := tp.ProviderOptions("high")
	betas, _ := o["anthropic"]["beta_headers"].([]string)
	if !slices.Contains(betas, profiles.AnthropicInterleavedThinking) || !slices.Contains(betas, "context-1m-2025-08-07") {
		t.Fatalf("beta headers %v", betas)
	}
	if o["chatcompat"]["echo_reasoning"] != false {
		t.Fatalf("chatcompat options %v", o["chatcompat"])
	}
	if again := p.ProviderOptions("high")["anthropic"]["beta_headers"].([]string); slices.Contains(again, "context-1m-2025-08-07") {
		t.Fatal("the merge changed the profile's own options")
	}
}
