package main

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/worker"
)

// sandboxFlags are worker tool's sandbox flags.
type sandboxFlags struct {
	sandbox    bool
	config     string
	network    string
	allowHosts []string
}

func (f *sandboxFlags) add(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&f.sandbox, "sandbox", false, "run as a fleet task would: under bubblewrap, file tools kept in --dir")
	fl.StringVar(&f.config, "config", "", "worker configuration whose sandbox settings apply (with --sandbox)")
	fl.StringVar(&f.network, "network", "", "with --sandbox: the task's sandbox.network (none, allowlist, full)")
	fl.StringSliceVar(&f.allowHosts, "allow-host", nil, "with --sandbox: the task's sandbox.allow_hosts (repeatable)")
}

// environment is the tool's environment in dir: a plain local one, or
// with --sandbox the one a fleet task would get (worker.LocalEnvironment),
// whose sandbox is named on stderr.
func (f *sandboxFlags) environment(dir string, stderr io.Writer) (execenv.Environment, error) {
	if !f.sandbox {
		if f.config != "" || f.network != "" || len(f.allowHosts) > 0 {
			return nil, usageErrorf("--config, --network and --allow-host need --sandbox")
		}
		env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
		if err != nil {
			return nil, usageErrorf("%v", err)
		}
		return env, nil
	}
	cfg, err := cli.Decode[runConfig](viper.New(), f.config)
	if err != nil {
		return nil, usageErrorf("%v", err)
	}
	cfg.Sandbox = worker.SandboxOn
	spec := fleet.SandboxSpec{Network: f.network, AllowHosts: f.allowHosts}
	if err := spec.Validate(); err != nil {
		return nil, usageErrorf("%v", err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	env, label, err := worker.LocalEnvironment(cfg.Config, dir, spec, log)
	if err != nil {
		return nil, &exitError{code: 1, msg: err.Error()}
	}
	fmt.Fprintf(stderr, "sandbox: %s\n", label)
	return env, nil
}
