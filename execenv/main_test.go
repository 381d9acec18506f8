package execenv_test

import (
	"os"
	"testing"

	"github.com/agentfleet/agentfleet/execenv/execenvtest"
	"github.com/agentfleet/agentfleet/internal/testenv"
)

func TestMain(m *testing.M) {
	// The conformance suite observes filtering of these variables.
	for k, v := range execenvtest.ProbeEnv {
		_ = os.Setenv(k, v)
	}
	testenv.VerifyTestMain(m)
}
