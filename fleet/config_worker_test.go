package fleet_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
)

func TestWorkerConfigDefaultsAndValidate(t *testing.T) {
	t.Parallel()
	c := fleet.WorkerConfig{}.WithDefaults()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	if c.Sessions != fleet.DefaultSessions || c.Queues[0] != "default" || c.MaxLiveChildren != 32 || c.ID == "" {
		t.Fatalf("defaults %+v", c)
	}
	for _, tc := range []struct {
		name string
		mod  func(*fleet.WorkerConfig)
		want string
	}{
		{"sessions", func(c *fleet.WorkerConfig) { c.Sessions = -1 }, "sessions must be >= 1"},
		{"id", func(c *fleet.WorkerConfig) { c.ID = "a.b" }, "worker_id"},
		{"queue", func(c *fleet.WorkerConfig) { c.Queues = []string{"worker"} }, "queues entry"},
		{"root", func(c *fleet.WorkerConfig) { c.WorkspaceRoot = "relative" }, "workspace_root must be an absolute path"},
		{"stale", func(c *fleet.WorkerConfig) { c.StaleAfter = time.Second; c.HeartbeatInterval = 2 * time.Second }, "stale_after"},
		{"profile", func(c *fleet.WorkerConfig) { c.AllowedProfiles = []string{"llama"} }, "allowed_profiles entry \"llama\""},
		{"provider", func(c *fleet.WorkerConfig) { c.Providers = map[string]fleet.ProviderConfig{"x": {}} }, "providers.x"},
		{"ssh key", func(c *fleet.WorkerConfig) { c.SSHKeys = map[string]fleet.SSHKeyConfig{"k": {KeyFile: "/nonexistent"}} }, "ssh_keys.k.key_file"},
		{"llm", func(c *fleet.WorkerConfig) { c.LLMConcurrency = map[string]int{"openai": 0} }, "llm_concurrency.openai"},
	} {
		c := fleet.WorkerConfig{}.WithDefaults()
		tc.mod(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
