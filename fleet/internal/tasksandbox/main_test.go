package tasksandbox_test

import (
	"testing"

	"github.com/agentfleet/agentfleet/internal/testenv"
)

// TestMain fails the package's tests when goroutines outlive them.
func TestMain(m *testing.M) { testenv.VerifyTestMain(m) }
