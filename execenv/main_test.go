package execenv_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentfleet/agentfleet/execenv/execenvtest"
)

func TestMain(m *testing.M) {
	// The conformance suite observes filtering of these variables.
	for k, v := range execenvtest.ProbeEnv {
		_ = os.Setenv(k, v)
	}
	goleak.VerifyTestMain(m)
}
