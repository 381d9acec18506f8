package worker

import (
	"fmt"
	"time"

	"github.com/agentfleet/agentfleet/agent/compact"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/internal/settings"
	"github.com/agentfleet/agentfleet/profiles"
)

// The spec's session settings reach the session through
// fleet/internal/settings, within the worker's policy (Config.Policy).

// checkPolicy refuses a spec beyond the worker's policy for good.
func (r *run) checkPolicy() error {
	if err := r.w.cfg.Policy.Check(r.spec); err != nil {
		return fmt.Errorf("%w: %v", errNotAllowed, err)
	}
	return nil
}

// profileOptions are the profile options the settings ask for (web_fetch).
func (r *run) profileOptions() ([]profiles.Option, error) {
	return settings.ProfileOptions(r.spec.Session, r.w.cfg.Policy)
}

// envSettings are the environment policy and command timeout cap of the
// task's environment.
func (r *run) envSettings() (execenv.EnvPolicy, time.Duration) {
	return settings.Env(r.spec.Session, r.w.cfg.Policy)
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
		SummaryModel: c.SummaryModel, Disabled: c.Disabled, MemoryFlush: c.MemoryFlush || c.RepoMemory}
}
