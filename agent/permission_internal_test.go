package agent

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/profiles"
)

func TestPermissionCallDescribesEachTool(t *testing.T) {
	dir := t.TempDir()
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	reg := profiles.OpenAI("").Registry().Clone()
	for _, tool := range profiles.Anthropic("").Registry().Names() {
		if tt, ok := profiles.Anthropic("").Registry().Get(tool); ok {
			reg.Register(tt)
		}
	}
	s := &Session{registry: reg, env: env}
	patchText := "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+exit 0\n*** Update File: src/a.go\n*** Move to: src/b.go\n@@\n-x\n+y\n*** End Patch"
	cases := []struct {
		name  string
		args  any
		kind  permission.Kind
		cmd   string
		paths []string
	}{
		{"shell", map[string]any{"command": "go test ./..."}, permission.KindShell, "go test ./...", nil},
		{"apply_patch", map[string]any{"patch": patchText}, permission.KindEdit, "", []string{".git/hooks/pre-commit", "src/a.go", "src/b.go"}},
		{"write_file", map[string]any{"file_path": filepath.Join(dir, "docs", "x.md")}, permission.KindEdit, "", []string{"docs/x.md"}},
		{"edit_file", map[string]any{"file_path": "/etc/hosts"}, permission.KindEdit, "", []string{"/etc/hosts"}},
		{"read_file", map[string]any{"file_path": "./a/../b.go"}, permission.KindRead, "", []string{"b.go"}},
		{"grep", map[string]any{"pattern": "x", "path": "src"}, permission.KindRead, "", []string{"src"}},
		{"wait", map[string]any{"agent_id": "a1"}, permission.KindAgent, "", nil},
		{"mcp__github__create_issue", map[string]any{"title": "x"}, permission.KindOther, "", nil},
	}
	for _, c := range cases {
		args, _ := json.Marshal(c.args)
		got := s.permissionCall(llm.ToolCall{ID: "1", Name: c.name, Arguments: args})
		if got.Kind != c.kind || got.Command != c.cmd || !slices.Equal(got.Paths, c.paths) {
			t.Errorf("%s: got %+v, want kind %s, command %q, paths %v", c.name, got, c.kind, c.cmd, c.paths)
		}
	}
}
