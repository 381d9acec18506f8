package cli

import "fmt"

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
