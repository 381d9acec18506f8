package main

import (
	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
	"github.com/agentfleet/agentfleet/fleet/bench"
)

func init() { addCommand(newBenchWorkerCmd) }

// newBenchWorkerCmd is one worker process of `agentfleet-dev bench
// --worker-processes`, which starts it with the flags it reads; hidden,
// because nothing else should start it.
func newBenchWorkerCmd() *cobra.Command {
	return &cobra.Command{
		Use:                "bench-worker",
		Short:              "One worker process of `agentfleet-dev bench --worker-processes` (internal)",
		Hidden:             true,
		DisableFlagParsing: true, // bench.WorkerMain reads the flags
		RunE: func(c *cobra.Command, args []string) error {
			// Traced as the bench process is (the OTEL_* environment it
			// inherits), so that tracing on costs what it costs a fleet.
			stopTracing, err := cli.SetupTracing(c.Context(), "agentfleet-bench-worker", "", cli.TracingConfig{}, cli.NewLogger("text", "warn", c.ErrOrStderr()))
			if err != nil {
				return failf("%v", err)
			}
			defer stopTracing()
			if err := bench.WorkerMain(c.Context(), args, cli.OpenStore, c.OutOrStdout(), c.ErrOrStderr()); err != nil {
				return failf("%v", err)
			}
			return nil
		},
	}
}
