package worker

import (
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/execenv/sandbox"
)

// Values of Config.Sandbox.
const (
	SandboxOn   = "on"
	SandboxOff  = "off"
	SandboxAuto = "auto"
)

// sandboxState is what the worker found at start: whether local tasks'
// commands run under bubblewrap, or why local tasks are refused.
type sandboxState struct {
	on      bool
	missing error // sandbox on but bubblewrap cannot run: local tasks fail with it
}

// newSandboxState checks bubblewrap once and says at start what local
// tasks will run in.
func newSandboxState(mode string, log *slog.Logger) sandboxState {
	if mode == SandboxOff {
		log.Warn("sandbox: off: local tasks run unconfined, as this worker's user, with its files and network")
		return sandboxState{}
	}
	err := sandbox.Available()
	switch {
	case err == nil:
		log.Info("sandbox: local tasks run under bubblewrap")
		return sandboxState{on: true}
	case mode == SandboxAuto:
		log.Warn("sandbox: bubblewrap cannot run here, so local tasks run UNSANDBOXED, as this worker's user", "reason", err)
		return sandboxState{}
	}
	log.Error("sandbox: bubblewrap cannot run here: local tasks will be refused (set sandbox: off to run them unconfined)", "err", err)
	return sandboxState{missing: err}
}

// localEnv builds the environment of a local task: under bubblewrap with
// the spec's sandbox (within the worker's bound), its file tools kept in
// the workspace and the read-only paths; or unconfined with sandbox: off.
func (r *run) localEnv(cfg execenv.LocalConfig) (execenv.Environment, error) {
	st, c := r.w.sandbox, r.w.cfg
	if st.missing != nil {
		return nil, fmt.Errorf("%w: local tasks run in a sandbox and %v; or set sandbox: off in this worker's configuration to run them unconfined",
			errNotAllowed, st.missing)
	}
	if !st.on {
		r.sandbox = SandboxOff
		return execenv.NewLocal(cfg)
	}
	if fe := c.SandboxBound.Permits(r.spec.Sandbox); fe != nil {
		return nil, fmt.Errorf("%w: %v", errNotAllowed, fe)
	}
	s := sandbox.Settings{Network: sandbox.Network(r.spec.Sandbox.Network), AllowHosts: r.spec.Sandbox.AllowHosts,
		ReadOnly: c.SandboxReadOnly, Writable: c.SandboxWritable, Logger: r.log}
	for _, k := range slices.Sorted(maps.Keys(c.SandboxEnv)) {
		s.Env = append(s.Env, k+"="+c.SandboxEnv[k])
	}
	l, err := sandbox.NewLocal(cfg, s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errBadEnvironment, err)
	}
	r.sandbox = s.Label()
	return sandbox.Scope(l), nil
}

// validateSandbox names a bad sandbox key.
func (c Config) validateSandbox() error {
	switch c.Sandbox {
	case "", SandboxOn, SandboxOff, SandboxAuto:
	default:
		return fmt.Errorf("sandbox must be %q, %q or %q, got %q", SandboxOn, SandboxOff, SandboxAuto, c.Sandbox)
	}
	for key, paths := range map[string][]string{"sandbox_read_only": c.SandboxReadOnly, "sandbox_writable": c.SandboxWritable} {
		for _, p := range paths {
			if !filepath.IsAbs(p) {
				return fmt.Errorf("%s entry %q must be an absolute path", key, p)
			}
		}
	}
	return c.SandboxBound.Validate()
}
