package worker

import (
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/profiles"
)

func TestProviderContextWindowBoundsTheTasks(t *testing.T) {
	pc := ProviderConfig{ContextWindow: 16_384, SummaryModel: "small"}
	if got := contextConfig(fleet.ContextSpec{Window: 64_000}, pc).Window; got != 16_384 {
		t.Errorf("a task asking for more than the provider's window got %d, want 16384", got)
	}
	if got := contextConfig(fleet.ContextSpec{Window: 8_192}, pc).Window; got != 8_192 {
		t.Errorf("a task narrowing the window got %d, want 8192", got)
	}
	if got := contextConfig(fleet.ContextSpec{}, ProviderConfig{}).Window; got != 0 {
		t.Errorf("no setting anywhere: %d, want 0 (the model's window)", got)
	}
	p, err := profiles.ForProvider("chatcompat", "llama-local", pc.ProfileOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	if p.ContextWindow() != 16_384 || p.SummaryModel() != "small" {
		t.Errorf("profile window %d summary model %q", p.ContextWindow(), p.SummaryModel())
	}
}
