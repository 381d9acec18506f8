// Command dispatcher runs the agentfleet dispatcher service and is its
// command-line client; it also migrates the database. Each subcommand lives
// in its own file and registers itself with addCommand from an init
// function, so this file stays a small root.
//
// Exit status: 0 on success, 1 when the command failed, 2 for bad usage.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// subcommands build the root's subcommands; files add to it in init.
var subcommands []func() *cobra.Command

// addCommand registers a subcommand constructor. Call it from init.
func addCommand(newCmd func() *cobra.Command) { subcommands = append(subcommands, newCmd) }

// exitError carries the exit status a command wants. Its message, when not
// empty, is printed to stderr.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// usageErrorf reports bad usage (exit status 2).
func usageErrorf(format string, a ...any) error {
	return &exitError{code: 2, msg: fmt.Sprintf(format, a...)}
}

// failf reports a failed command (exit status 1).
func failf(format string, a ...any) error {
	return &exitError{code: 1, msg: fmt.Sprintf(format, a...)}
}

// newRootCmd builds the dispatcher command with every registered subcommand.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "dispatcher",
		Short:         "agentfleet dispatcher: the task API, its command-line client and database migrations",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErrorf("%v", err) })
	for _, newCmd := range subcommands {
		root.AddCommand(newCmd())
	}
	return root
}

// execute runs the command line args and returns the exit status.
func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	code := 2 // cobra's own errors (unknown command, wrong arguments) are usage errors
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintln(stderr, "dispatcher:", msg)
	}
	return code
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
