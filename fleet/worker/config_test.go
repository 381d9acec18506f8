package worker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/fleet/worker"
)

func TestWorkerConfigDefaultsAndValidate(t *testing.T) {
	t.Parallel()
	c := worker.Config{}.WithDefaults()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults do not validate: %v", err)
	}
	if c.Sessions != worker.DefaultSessions || c.Queues[0] != "default" || c.MaxLiveChildren != 32 || c.ID == "" {
		t.Fatalf("defaults %+v", c)
	}
	for _, tc := range []struct {
		name string
		mod  func(*worker.Config)
		want string
	}{
		{"sessions", func(c *worker.Config) { c.Sessions = -1 }, "sessions must be >= 1"},
		{"id", func(c *worker.Config) { c.ID = "a.b" }, "worker_id"},
		{"queue", func(c *worker.Config) { c.Queues = []string{"worker"} }, "queues entry"},
		{"root", func(c *worker.Config) { c.WorkspaceRoot = "relative" }, "workspace_root must be an absolute path"},
		{"uid range", func(c *worker.Config) { c.SandboxUIDRange = "0-10" }, "sandbox_uid_range"},
		{"memory", func(c *worker.Config) { c.SandboxLimits.Memory = "4 gigs" }, "sandbox_limits.memory"},
		{"pids", func(c *worker.Config) { c.SandboxLimits.Pids = -1 }, "sandbox_limits: pids must be >= 0"},
		{"stale", func(c *worker.Config) { c.StaleAfter = time.Second; c.HeartbeatInterval = 2 * time.Second }, "stale_after"},
		{"profile", func(c *worker.Config) { c.AllowedProfiles = []string{"llama"} }, "allowed_profiles entry \"llama\""},
		{"provider", func(c *worker.Config) { c.Providers = map[string]worker.ProviderConfig{"x": {}} }, "providers.x"},
		{"ssh key", func(c *worker.Config) { c.SSHKeys = map[string]worker.SSHKeyConfig{"k": {KeyFile: "/nonexistent"}} }, "ssh_keys.k.key_file"},
		{"llm", func(c *worker.Config) { c.LLMConcurrency = map[string]int{"openai": 0} }, "llm_concurrency.openai"},
		{"allow private", func(c *worker.Config) { c.OutboundAllowPrivate = []string{"10.0.0.1", "git.internal"} }, "outbound_allow_private[1]"},
		{"mcp allowlist", func(c *worker.Config) { c.MCPHTTPAllowlist = []string{"https://mcp.example@169.254.169.254/"} }, "mcp_http_allowlist[0]"},
		{"hooks allowlist", func(c *worker.Config) { c.HooksHTTPAllowlist = []string{"ftp://hooks.example"} }, "hooks_http_allowlist[0]"},
		{"git store without token", func(c *worker.Config) { c.GitStore.URL = "http://dispatcher:8080" }, "git_store.token"},
		{"git store token alone", func(c *worker.Config) { c.GitStore.Token = "t" }, "git_store.url"},
		{"git store url", func(c *worker.Config) { c.GitStore = worker.GitStoreConfig{URL: "ftp://d", Token: "t"} }, "git_store.url"},
		{"key name", func(c *worker.Config) { c.ConcurrencyKeys = map[string]worker.KeyLimit{"a.b": {}} }, "concurrency_keys.a.b: the key"},
		{"key weight", func(c *worker.Config) { c.ConcurrencyKeys = map[string]worker.KeyLimit{"k": {Weight: -1}} }, "concurrency_keys.k: max_running and weight must be >= 0"},
		{"key maximum", func(c *worker.Config) { c.ConcurrencyKeys = map[string]worker.KeyLimit{"k": {MaxRunning: 20_000}} }, "concurrency_keys.k: max_running must be at most 10000"},
		{"default key maximum", func(c *worker.Config) { c.ConcurrencyKeyDefault.MaxRunning = 10_001 }, "concurrency_key_default: max_running must be at most 10000"},
	} {
		c := worker.Config{}.WithDefaults()
		tc.mod(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
