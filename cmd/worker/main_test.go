package main

import (
	"testing"

	"github.com/agentfleet/agentfleet/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.VerifyTestMain(m)
}
