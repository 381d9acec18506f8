package budget_test

import (
	"testing"

	"github.com/agentfleet/agentfleet/store/pgtest"
)

// TestMain stops the shared test Postgres, if a test started one, and
// fails the run if a goroutine outlived the tests.
func TestMain(m *testing.M) { pgtest.Main(m) }
