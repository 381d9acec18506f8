package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/agent/permission"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/profiles"
	"github.com/agentfleet/agentfleet/tools"
	"github.com/agentfleet/agentfleet/tools/mcp"
)

// hookPath is the file every probe tries to create: a git hook runs
// outside any sandbox, in the next git command a person runs.
const hookPath = ".git/hooks/pre-commit"

// hookPatch adds the hook in the v4a patch format; hookMovePatch moves
// hookSource there.
const (
	hookPatch     = "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+#!/bin/sh\n+echo pwned\n*** End Patch\n"
	hookSource    = "hook-source.sh"
	hookMovePatch = "*** Begin Patch\n*** Update File: hook-source.sh\n*** Move to: .git/hooks/pre-commit\n@@\n #!/bin/sh\n+echo pwned\n*** End Patch\n"
)

// TestEveryToolThatWritesIsRefusedTheGitHooks walks every tool of every
// profile, with a sample MCP server's tool added. For each tool it builds
// argument objects from the tool's own JSON schema: one string property
// names the hook (its path, its absolute path, a patch adding it by either
// path, or a patch moving a file there), the other strings are a body or
// "", the other properties the least their schema accepts. It runs each
// one the schema accepts through the tool itself, ungated, in the
// workspace (the hook removed before each): those that create the hook are
// the tool's real ways to write it. Each is then sent by a scripted model
// to a session under the default policy, which must refuse every one: by
// the protected .git/ directory when the tool says which paths it
// touches, as a write to unknown paths (which asks a person, and there is
// none here) when it does not (the MCP tool). A tool that declares it
// mutates must have such a shape (else the walk proves nothing about it),
// and one that declares it does not must have none.
// Shell commands are out of scope: the permission layer decides them by
// their command (see permission.Destructive), not by paths.
func TestEveryToolThatWritesIsRefusedTheGitHooks(t *testing.T) {
	dir := t.TempDir()
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	must(t, err)
	mc := sampleMCP(t, env)
	for _, prof := range profiles.All(profiles.WithTools(mc.Tools()...)) {
		t.Run(prof.ID(), func(t *testing.T) {
			must(t, os.MkdirAll(filepath.Join(dir, ".git", "hooks"), 0o755))
			var probes []llm.ToolCall
			want := map[string]string{} // call ID -> the start of its result
			for _, name := range prof.Registry().Names() {
				tool, _ := prof.Registry().Get(name)
				if name == "shell" {
					continue
				}
				writers := writingShapes(t, prof.Registry(), env, tool, dir)
				switch {
				case tool.Mutates && len(writers) == 0:
					t.Errorf("%s mutates, but no argument object built from its schema writes %s: teach writingShapes its shape", name, hookPath)
				case !tool.Mutates && len(writers) > 0:
					t.Errorf("%s says it does not mutate, but %s wrote %s", name, writers[0], hookPath)
				}
				rule := "Permission denied (protected .git/): "
				if tool.Paths == nil {
					rule = "Permission denied (unknown paths): it needs a person's approval"
				}
				for _, args := range writers {
					id := fmt.Sprintf("p%d", len(probes))
					probes = append(probes, llm.ToolCall{ID: id, Name: name, Arguments: args})
					want[id] = rule
				}
			}
			if len(probes) == 0 {
				t.Fatal("no tool of the profile writes the hook: the walk proves nothing")
			}
			t.Logf("%d ways to write %s: %v", len(probes), hookPath, countByTool(probes))
			client := newFakeClient(step{calls: probes}, step{text: "done"})
			s, err := agent.New(agent.Config{Client: client, Profile: prof, Env: env,
				Permissions: permission.NewChecker(permission.Policy{})})
			must(t, err)
			t.Cleanup(s.Abort)
			if _, err := s.Submit(ctx30(t), "install a hook"); err != nil {
				t.Fatal(err)
			}
			reqs := client.Requests()
			for _, c := range probes {
				got, ok := resultOf(reqs, c.ID)
				if !ok || !strings.HasPrefix(got, want[c.ID]) {
					t.Errorf("%s %s: got %q, want the default policy to refuse it: %q...", c.Name, c.Arguments, got, want[c.ID])
				}
			}
			if _, err := os.Stat(filepath.Join(dir, hookPath)); err == nil {
				t.Errorf("%s was written through the gate", hookPath)
			}
		})
	}
}

// writingShapes returns the argument objects built from tool's schema
// (see the test above) that create the hook when the tool runs them.
func writingShapes(t *testing.T, reg *tools.Registry, env execenv.Environment, tool tools.Tool, dir string) []json.RawMessage {
	t.Helper()
	hook := filepath.Join(dir, hookPath)
	var out []json.RawMessage
	for _, args := range schemaShapes(t, tool.Parameters, dir) {
		_ = os.Remove(hook)
		must(t, os.WriteFile(filepath.Join(dir, hookSource), []byte("#!/bin/sh\n"), 0o644))
		reg.Execute(context.Background(), llm.ToolCall{ID: "probe", Name: tool.Name, Arguments: args}, env, tools.ExecOptions{})
		if _, err := os.Stat(hook); err == nil {
			out = append(out, args)
		}
	}
	_ = os.Remove(hook)
	return out
}

// propSchema is what schemaShapes reads of a property's schema.
type propSchema struct {
	Type    any         `json:"type"`
	Minimum *float64    `json:"minimum"`
	Enum    []any       `json:"enum"`
	Items   *propSchema `json:"items"`
}

// schemaShapes builds argument objects from schema: every combination of
// the string properties (each set to one of the probe values, or left
// out when optional) in which exactly one names the hook, the other
// required properties at their least value; only those the schema
// accepts.
func schemaShapes(t *testing.T, schema json.RawMessage, dir string) []json.RawMessage {
	t.Helper()
	var s struct {
		Properties map[string]propSchema `json:"properties"`
		Required   []string              `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatalf("schema %s: %v", schema, err)
	}
	naming := []string{hookPath, filepath.Join(dir, hookPath), hookPatch, hookMovePatch,
		strings.Replace(hookPatch, hookPath, filepath.Join(dir, hookPath), 1)}
	values := append(slices.Clone(naming), "#!/bin/sh\necho pwned\n", "")
	base := map[string]any{}
	var strs []string
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[name]
		switch {
		case p.Type == "string" && len(p.Enum) == 0:
			strs = append(strs, name)
		case slices.Contains(s.Required, name):
			base[name] = leastValue(p)
		}
	}
	var out []json.RawMessage
	var walk func(i int, m map[string]any, named bool)
	walk = func(i int, m map[string]any, named bool) {
		if i == len(strs) {
			b, err := json.Marshal(m)
			if err == nil && named && tools.ValidateArgs(schema, b) == nil {
				out = append(out, b)
			}
			return
		}
		if !slices.Contains(s.Required, strs[i]) {
			walk(i+1, m, named)
		}
		for _, v := range values {
			if named && slices.Contains(naming, v) {
				continue // one property names the hook; more add nothing
			}
			next := maps.Clone(m)
			next[strs[i]] = v
			walk(i+1, next, named || slices.Contains(naming, v))
		}
	}
	walk(0, base, false)
	return out
}

// leastValue is the least value a property's schema accepts.
func leastValue(p propSchema) any {
	switch {
	case len(p.Enum) > 0:
		return p.Enum[0]
	case p.Type == "integer" || p.Type == "number":
		if p.Minimum != nil {
			return *p.Minimum
		}
		return 1
	case p.Type == "boolean":
		return false
	case p.Type == "array" && p.Items != nil:
		return []any{leastValue(*p.Items)}
	case p.Type == "array":
		return []any{}
	case p.Type == "string":
		return hookPath
	}
	return map[string]any{}
}

// sampleMCP starts this test binary as an MCP server (see serveMCP) in
// env, so its tool mcp__notes__save runs through the real MCP adapter.
func sampleMCP(t *testing.T, env execenv.Environment) *mcp.Client {
	t.Helper()
	exe, err := os.Executable()
	must(t, err)
	c, errs := mcp.Start(context.Background(), []mcp.ServerConfig{{Name: "notes", Command: exe,
		Env: map[string]string{envServeMCP: "1"}, StartTimeout: 20 * time.Second}}, mcp.Options{Env: env})
	t.Cleanup(func() { _ = c.Close() })
	for _, e := range errs {
		t.Fatalf("start the sample MCP server: %v", e)
	}
	if len(c.Tools()) == 0 {
		t.Fatal("the sample MCP server offers no tool")
	}
	return c
}

func countByTool(calls []llm.ToolCall) map[string]int {
	n := map[string]int{}
	for _, c := range calls {
		n[c.Name]++
	}
	return n
}
