// Command dispatcher runs the agentfleet dispatcher service and is its
// command-line client; it also migrates the database. Each subcommand lives
// in its own file and registers itself with addCommand from an init
// function, so this file stays a small root.
//
// It links neither the worker nor the simulated model: dev mode and the
// fleet benchmark are cmd/agentfleet-dev (`agentfleet-dev dev`,
// `agentfleet-dev bench`), and deps_test.go keeps it that way.
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

// program is the dispatcher's root; files add their subcommands in init.
var program = &cli.Program{
	Name:  "dispatcher",
	Short: "agentfleet dispatcher: the task API, its command-line client and database migrations",
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
