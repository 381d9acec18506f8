package testenv

import (
	"testing"
	"time"
)

// UntilStarted is for tests of a command that must get going (print a
// marker, set a trap) before its timeout fires. On a loaded machine a short
// timeout can fire first, so it calls run with first and, while run reports
// that the command had not started and the timeout is below limit, again
// with a timeout four times longer. It returns the timeout of the last call.
func UntilStarted(tb testing.TB, first, limit time.Duration, run func(timeout time.Duration) (started bool)) time.Duration {
	tb.Helper()
	timeout := first
	for !run(timeout) && timeout < limit {
		tb.Logf("the command had not started within %v; retrying with a longer timeout", timeout)
		timeout *= 4
	}
	return timeout
}
