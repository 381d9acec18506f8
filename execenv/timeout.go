package execenv

import (
	"fmt"
	"time"
)

// TimeoutMessage is the text that tells the model a command ran out of time
// and how to ask for more. Environments append it to ExecResult.Stderr when
// TimedOut is set, so that it comes after all output; tools use this
// function to recognise or reproduce it.
func TimeoutMessage(timeout time.Duration) string {
	return fmt.Sprintf("[ERROR: Command timed out after %dms. Partial output is shown above.\n%s]",
		timeout.Milliseconds(), TimeoutRetryHint)
}

// TimeoutRetryHint is the last sentence of TimeoutMessage, as the spec
// words it for a shell whose timeout parameter is timeout_ms. A tool whose
// parameter has another name, or that has none, replaces it
// (tools.ShellParams.TimeoutHint).
const TimeoutRetryHint = "You can retry with a longer timeout by setting the timeout_ms parameter."

// appendTimeoutMessage adds the timeout message to stderr on its own line.
func appendTimeoutMessage(stderr string, timeout time.Duration) string {
	if stderr != "" && stderr[len(stderr)-1] != '\n' {
		stderr += "\n"
	}
	return stderr + TimeoutMessage(timeout)
}

// effectiveTimeout applies the default and the cap to a requested timeout.
func effectiveTimeout(requested, def, max time.Duration) time.Duration {
	if requested <= 0 {
		requested = def
	}
	if requested > max {
		requested = max
	}
	return requested
}
