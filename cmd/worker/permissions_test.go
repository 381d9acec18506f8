package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/viper"

	"github.com/agentfleet/agentfleet/agent/permission"
)

func TestRunConfigPermissions(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.yaml")
	yaml := `database_url: w.db
approval_timeout: 2h
permissions:
  mode: accept_edits
  destructive: deny
  protected: [secrets]
  rules:
    - {tool: shell, pattern: "git *", action: allow}
    - {tool: "mcp__*", action: deny}
`
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadRunConfig(viper.New(), file, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Permissions
	if p.Mode != permission.ModeAcceptEdits || p.Destructive != permission.Deny || len(p.Protected) != 1 || len(p.Rules) != 2 ||
		p.Rules[0] != (permission.Rule{Tool: "shell", Pattern: "git *", Action: permission.Allow}) || cfg.ApprovalTimeout != 2*time.Hour {
		t.Fatalf("permissions %+v, approval_timeout %s", p, cfg.ApprovalTimeout)
	}

	bad := strings.Replace(yaml, `"git *"`, `"git [x"`, 1)
	if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadRunConfig(viper.New(), file, func(string) string { return "" }); err == nil ||
		!strings.Contains(err.Error(), "permissions.rules[0].pattern") {
		t.Fatalf("an invalid rule pattern: %v, want an error naming permissions.rules[0].pattern", err)
	}
}
