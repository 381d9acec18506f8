package worker

import (
	"fmt"
	"time"

	"github.com/agentfleet/agentfleet/execenv"
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
