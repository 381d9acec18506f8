package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/viper"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/cmd/internal/cli"
)

// TestRunConfigExtensions: MCP servers, secrets, hooks and skill
// directories come from the worker's configuration file, and a wrong one
// is named.
func TestRunConfigExtensions(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "w.yaml")
	yaml := `database_url: x.db
mcp_servers:
  - {name: github, command: npx, args: ["-y", "server-github"], env: {TOKEN: "${secret:GH}"}, call_timeout: 30s}
  - {name: tickets, url: "https://mcp.internal.example/t", headers: {Authorization: "Bearer ${secret:T}"}, required: true}
mcp_secrets: {GH: "env:GH_TOKEN"}
mcp_http_allowlist: ["https://mcp.internal.example/"]
hooks:
  - {event: post_tool_use, tool: "edit_*", type: shell, command: "gofmt -l -w .", timeout: 1m}
hooks_http_allowlist: ["https://hooks.example/"]
skill_dirs: ["` + dir + `"]
`
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := cli.Load[runConfig](viper.New(), file)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.MCPServers
	if len(s) != 2 || s[0].Args[1] != "server-github" || s[0].CallTimeout != 30*time.Second || strings.ToUpper(firstKey(s[0].Env)) != "TOKEN" ||
		!s[1].Required || len(s[1].Headers) != 1 || len(cfg.MCPSecrets) != 1 {
		t.Fatalf("mcp_servers %+v, secrets %v", s, cfg.MCPSecrets)
	}
	h := cfg.Hooks
	if len(h) != 1 || h[0].Event != agent.HookPostToolUse || h[0].Timeout != time.Minute || cfg.SkillDirs[0] != dir {
		t.Fatalf("hooks %+v, skill_dirs %v", h, cfg.SkillDirs)
	}
	bad := strings.Replace(yaml, "event: post_tool_use", "event: after_edit", 1)
	bad = strings.Replace(bad, "name: tickets", "name: github", 1)
	if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = cli.Load[runConfig](viper.New(), file)
	if err == nil || !strings.Contains(err.Error(), `hooks[0].event "after_edit" is unknown`) || !strings.Contains(err.Error(), `mcp_servers[1].name "github" names two servers`) {
		t.Fatalf("err = %v", err)
	}
}

// firstKey returns a key of m (the configuration reader folds keys to
// lower case; the worker upper-cases env names and matches secret names
// in any case).
func firstKey(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}
