package worker_test

import (
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet/worker"
)

// tenants names tenants (subject tokens); empty serves every tenant.
func TestConfigTenants(t *testing.T) {
	if err := (worker.Config{Tenants: []string{"team-a", "b_2"}}).WithDefaults().Validate(); err != nil {
		t.Fatalf("valid tenants refused: %v", err)
	}
	err := (worker.Config{Tenants: []string{"team-a", "a.*"}}).WithDefaults().Validate()
	if err == nil || !strings.Contains(err.Error(), `tenants entry "a.*"`) {
		t.Fatalf("Validate = %v, want an error naming the tenants entry", err)
	}
}
