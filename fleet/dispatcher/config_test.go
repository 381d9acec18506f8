package dispatcher

import (
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/queue"
)

func TestConfigDefaults(t *testing.T) {
	c := Config{}.WithDefaults()
	if c.ControlTimeout != queue.DefaultControlTimeout {
		t.Errorf("control timeout %s, want queue.DefaultControlTimeout (%s)", c.ControlTimeout, queue.DefaultControlTimeout)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
}

// TestConfigValidateReportsEveryFieldByItsKey: as the worker's, every
// invalid field is reported at once, named by its configuration key.
func TestConfigValidateReportsEveryFieldByItsKey(t *testing.T) {
	c := Config{Profiles: []string{"openai"}, DefaultProfile: "anthropic", Queues: []string{"default", "bad queue"},
		StatsInterval: -time.Second, ApprovalSweep: -time.Second, BudgetCheckInterval: -time.Second,
		ControlTimeout: -time.Second, Policy: fleet.Policy{EnvPolicy: "everything"}}.WithDefaults()
	err := c.Validate()
	if err == nil {
		t.Fatal("an invalid config validated")
	}
	msg := err.Error()
	for _, key := range []string{`default_profile "anthropic"`, `queues entry "bad queue"`, "stats_interval must be >= 0",
		"approval_sweep", "budget_check_interval", "control_timeout", "policy.env_policy"} {
		if !strings.Contains(msg, key) {
			t.Errorf("the error does not name %s:\n%s", key, msg)
		}
	}
	if n := len(strings.Split(msg, "\n")); n != 7 {
		t.Errorf("%d errors, want 7 (one per field):\n%s", n, msg)
	}
	if strings.Contains(msg, "Config.") || strings.Contains(msg, "DefaultProfile") {
		t.Errorf("the error names Go fields, not configuration keys:\n%s", msg)
	}
}
