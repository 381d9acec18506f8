package agent_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain plants a secret-looking and a plain variable in the process
// environment (before any parallel test runs) for the env-filtering check.
func TestMain(m *testing.M) {
	os.Setenv("AGENTFLEET_PROBE_API_KEY", "must-not-leak")
	os.Setenv("AGENTFLEET_PROBE_PLAIN", "visible-value")
	goleak.VerifyTestMain(m)
}
