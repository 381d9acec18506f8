// Command agentfleet-dev is the development companion of the dispatcher:
// `agentfleet-dev dev` runs a whole fleet in one process (embedded NATS,
// SQLite, the API and dashboard, in-process workers and, without a
// provider key, the simulated model), and `agentfleet-dev bench` measures
// a fleet. Both link the worker and llm/sim, which the production
// dispatcher binary must not, so they live here rather than in
// cmd/dispatcher. Each subcommand lives in its own file and registers
// itself with addCommand from an init function.
//
// Exit status: 0 on success, 1 when the command failed, 2 for bad usage.
package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
	"github.com/agentfleet/agentfleet/internal/gctune"
)

// program is the root; files add their subcommands in init.
var program = &cli.Program{
	Name:  "agentfleet-dev",
	Short: "agentfleet for development: a whole fleet in one process (dev) and the fleet benchmark (bench)",
}

// addCommand registers a subcommand constructor. Call it from init.
func addCommand(newCmd func() *cobra.Command) { program.Add(newCmd) }

var (
	usageErrorf = cli.UsageErrorf // bad usage, exit status 2
	failf       = cli.Failf       // a failed command, exit status 1
	noArgs      = cli.NoArgs      // a command that takes no arguments
)

// execute runs the command line args and returns the exit status.
func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return program.Execute(ctx, args, stdin, stdout, stderr)
}

func main() {
	gctune.Apply() // a server's GC target; see internal/gctune
	program.Main()
}
