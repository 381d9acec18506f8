package worker

import (
	"github.com/agentfleet/agentfleet/agent/compact"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/profiles"
)

// contextOptions are the profile options of a provider's context settings.
func contextOptions(pc ProviderConfig) []profiles.Option {
	var opts []profiles.Option
	if pc.ContextWindow > 0 {
		opts = append(opts, profiles.WithContextWindow(pc.ContextWindow))
	}
	if pc.SummaryModel != "" {
		opts = append(opts, profiles.WithSummaryModel(pc.SummaryModel))
	}
	return opts
}

// contextConfig maps a task's context spec onto the session: the
// provider's context_window bounds the task's window (a task may only
// narrow what the operator set).
func contextConfig(c fleet.ContextSpec, pc ProviderConfig) compact.Config {
	window := c.Window
	if pc.ContextWindow > 0 && (window == 0 || window > pc.ContextWindow) {
		window = pc.ContextWindow
	}
	return compact.Config{Window: window, Reserve: c.Reserve, KeepRecentRounds: c.KeepRecentRounds,
		SummaryModel: c.SummaryModel, Disabled: c.Disabled, MemoryFlush: c.MemoryFlush}
}
