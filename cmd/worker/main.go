// Command worker runs agent sessions for the fleet and offers debugging
// subcommands. Each subcommand lives in its own file and registers itself
// with addCommand from an init function, so this file stays a small root.
//
// Exit status: 0 on success, 1 when the work failed (for example a tool
// returned an error result), 2 for bad usage.
package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
	"github.com/agentfleet/agentfleet/internal/gctune"
)

// program is the worker's root; files add their subcommands in init.
var program = &cli.Program{
	Name:  "worker",
	Short: "agentfleet worker: runs agent sessions and their tools",
}

// addCommand registers a subcommand constructor. Call it from init.
func addCommand(newCmd func() *cobra.Command) { program.Add(newCmd) }

// usageErrorf reports bad usage (exit status 2).
var usageErrorf = cli.UsageErrorf

// exitError carries the exit status a command wants; tool.go builds it
// directly. Its message, when not empty, is printed to stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// ExitCode is the status cli.Program.Execute returns for e.
func (e *exitError) ExitCode() int { return e.code }

// execute runs the command line args and returns the exit status.
func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return program.Execute(ctx, args, stdin, stdout, stderr)
}

func main() {
	gctune.Apply() // a server's GC target; see internal/gctune
	program.Main()
}
