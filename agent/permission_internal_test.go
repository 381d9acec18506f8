package agent

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/profiles"
	"github.com/agentfleet/agentfleet/tools"
)

func TestPermissionCallDescribesEachTool(t *testing.T) {
	dir := t.TempDir()
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{env: env}
	byProfile := map[string]*tools.Registry{"core": tools.Core()}
	for _, p := range profiles.All() {
		byProfile[p.ID()] = p.Registry()
	}
	byProfile["core"].Register(tools.Tool{Name: "mcp__github__create_issue", Mutates: true})
	byProfile["core"].Register(tools.Tool{Name: "mcp__github__get_issue"})
	byProfile["core"].Register(tools.Tool{Name: "wait", Mutates: true})
	patchText := "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+exit 0\n*** Update File: src/a.go\n*** Move to: src/b.go\n@@\n-x\n+y\n*** Delete File: old.txt\n*** End Patch"
	patched := []string{".git/hooks/pre-commit", "src/a.go", "src/b.go", "old.txt"}
	cases := []struct {
		profile, name string
		args          any
		kind          permission.Kind
		cmd           string
		paths         []string
		unknown       bool
	}{
		{"openai", "shell", map[string]any{"command": "go test ./..."}, permission.KindShell, "go test ./...", nil, false},
		{"openai", "apply_patch", map[string]any{"input": patchText}, permission.KindEdit, "", patched, false},
		{"core", "apply_patch", map[string]any{"patch": patchText}, permission.KindEdit, "", patched, false},
		{"anthropic", "write_file", map[string]any{"file_path": filepath.Join(dir, "docs", "x.md")}, permission.KindEdit, "", []string{"docs/x.md"}, false},
		{"anthropic", "edit_file", map[string]any{"file_path": "/etc/hosts"}, permission.KindEdit, "", []string{"/etc/hosts"}, false},
		{"gemini", "edit_file", map[string]any{"file_path": "a/../.git/config"}, permission.KindEdit, "", []string{".git/config"}, false},
		{"anthropic", "read_file", map[string]any{"file_path": "./a/../b.go"}, permission.KindRead, "", []string{"b.go"}, false},
		{"anthropic", "grep", map[string]any{"pattern": "x", "path": "src"}, permission.KindRead, "", []string{"src"}, false},
		{"gemini", "grep", map[string]any{"pattern": "x", "dir_path": "src"}, permission.KindRead, "", []string{"src"}, false},
		{"gemini", "read_many_files", map[string]any{"include": []string{"a.go", "secrets/*"}}, permission.KindRead, "", []string{"a.go", "secrets/*"}, false},
		{"gemini", "list_dir", map[string]any{"dir_path": "."}, permission.KindRead, "", []string{"."}, false},
		{"core", "wait", map[string]any{"agent_id": "a1"}, permission.KindAgent, "", nil, false},
		{"core", "mcp__github__create_issue", map[string]any{"title": "x"}, permission.KindOther, "", nil, true},
		{"core", "mcp__github__get_issue", map[string]any{"id": 1}, permission.KindRead, "", nil, true},
	}
	for _, c := range cases {
		tool, ok := byProfile[c.profile].Get(c.name)
		if !ok {
			t.Fatalf("%s has no %s", c.profile, c.name)
		}
		args, _ := json.Marshal(c.args)
		got, err := s.permissionCall(llm.ToolCall{ID: "1", Name: c.name, Arguments: args}, tool, args)
		if err != nil || got.Kind != c.kind || got.Command != c.cmd || !slices.Equal(got.Paths, c.paths) || got.PathsUnknown != c.unknown {
			t.Errorf("%s %s: got %+v, %v; want kind %s, command %q, paths %v, unknown %v", c.profile, c.name, got, err, c.kind, c.cmd, c.paths, c.unknown)
		}
	}
}

// A patch that does not parse is the tool's own error, before any policy.
func TestPermissionCallOfABadPatchIsTheToolsError(t *testing.T) {
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	s := &Session{env: env}
	tool, _ := profiles.OpenAI("").Registry().Get("apply_patch")
	args := json.RawMessage(`{"input":"*** Add File: x\n+y"}`)
	_, err = s.permissionCall(llm.ToolCall{ID: "1", Name: "apply_patch", Arguments: args}, tool, args)
	if err == nil || !strings.Contains(err.Error(), "invalid patch") || !strings.Contains(err.Error(), "Nothing was changed") {
		t.Fatalf("err = %v, want the patch's parse error", err)
	}
}
