package trust_test

import (
	"testing"

	"github.com/agentfleet/agentfleet/store/pgtest"
)

// TestMain stops the shared test Postgres and fails the run if a
// goroutine outlived the suite.
func TestMain(m *testing.M) { pgtest.Main(m) }
