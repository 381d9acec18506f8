package worker_test

import (
	"testing"

	"github.com/agentfleet/agentfleet/store/pgtest"
)

// TestMain stops the Postgres server pgtest started for the package's tests.
func TestMain(m *testing.M) { pgtest.Main(m) }
