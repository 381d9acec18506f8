package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// ExitError carries the exit status a command wants. Its message, when not
// empty, is printed to stderr.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// ExitCode is the status [Program.Execute] returns for e.
func (e *ExitError) ExitCode() int { return e.Code }

// UsageErrorf reports bad usage (exit status 2).
func UsageErrorf(format string, a ...any) error {
	return &ExitError{Code: 2, Msg: fmt.Sprintf(format, a...)}
}

// Failf reports a failed command (exit status 1).
func Failf(format string, a ...any) error {
	return &ExitError{Code: 1, Msg: fmt.Sprintf(format, a...)}
}

// NoArgs is a cobra argument check: any positional argument is bad usage.
func NoArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return UsageErrorf("unexpected arguments %q", args)
	}
	return nil
}
