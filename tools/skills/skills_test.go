package skills_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/tools"
	"github.com/agentfleet/agentfleet/tools/skills"
)

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const releaseSkill = `---
name: release-notes
description: Write release notes from the git log since the last tag.
---

# Release notes

1. Run git log since the last tag.
2. Group the changes; see template.md.
`

func TestDiscoverPromptAndTool(t *testing.T) {
	repo, opDir := t.TempDir(), t.TempDir()
	write(t, repo, ".agents/skills/release/SKILL.md", releaseSkill)
	write(t, repo, ".agents/skills/release/template.md", "## Added\n## Fixed\n")
	write(t, repo, ".claude/skills/review/SKILL.md", "---\nname: code-review\ndescription: |\n  Review a change for bugs\n  and style.\n---\nLook for bugs first.\n")
	write(t, repo, ".claude/skills/nofm/SKILL.md", "# just markdown\n")
	write(t, repo, ".claude/skills/badyaml/SKILL.md", "---\nname: [unclosed\ndescription: x\n---\n")
	write(t, repo, ".claude/skills/nodesc/SKILL.md", "---\nname: nodesc\n---\nbody\n")
	write(t, repo, ".claude/skills/dup/SKILL.md", "---\nname: release-notes\ndescription: again\n---\n")
	write(t, opDir, "deploy/SKILL.md", "---\nname: deploy-check\ndescription: Check a project is ready to deploy.\n---\nRun the tests.\n")
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: repo})
	if err != nil {
		t.Fatal(err)
	}
	set, problems, err := skills.Discover(context.Background(), env, []string{opDir})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sk := range set.Skills() {
		names = append(names, sk.Name)
	}
	if got := strings.Join(names, ","); got != "code-review,deploy-check,release-notes" {
		t.Fatalf("skills = %s", got)
	}
	want := map[string]string{
		".claude/skills/nofm/SKILL.md":    "does not start with front matter",
		".claude/skills/badyaml/SKILL.md": "not valid YAML",
		".claude/skills/nodesc/SKILL.md":  "no description",
		".claude/skills/dup/SKILL.md":     `"release-notes" is taken by .agents/skills/release/SKILL.md`,
	}
	if len(problems) != len(want) {
		t.Fatalf("problems = %v", problems)
	}
	for _, p := range problems {
		if !strings.Contains(p.Error(), want[p.Path]) || !strings.HasPrefix(p.Error(), "skill file "+p.Path+" skipped: ") {
			t.Errorf("%s: %v, want %q", p.Path, p, want[p.Path])
		}
	}
	prompt := set.Prompt()
	for _, line := range []string{"- code-review: Review a change for bugs and style.", "- deploy-check: Check a project is ready to deploy.",
		"- release-notes: Write release notes from the git log since the last tag."} {
		if !strings.Contains(prompt, line) {
			t.Fatalf("prompt lacks %q:\n%s", line, prompt)
		}
	}
	if strings.Contains(prompt, "Group the changes") {
		t.Fatal("the prompt carries a skill's body; it should list names and descriptions only")
	}
	reg := tools.NewRegistry(set.Tool())
	call := func(args string) tools.Result {
		return reg.Execute(context.Background(), llm.ToolCall{ID: "1", Name: "skill", Arguments: json.RawMessage(args)}, env, tools.ExecOptions{})
	}
	res := call(`{"name":"release-notes"}`)
	if res.IsError || !strings.Contains(res.Content, "Group the changes; see template.md.") || !strings.Contains(res.Content, "- template.md") ||
		strings.Contains(res.Content, "description:") {
		t.Fatalf("load = %+v", res)
	}
	if res := call(`{"name":"release-notes","file":"template.md"}`); res.IsError || res.Content != "## Added\n## Fixed\n" {
		t.Fatalf("file = %+v", res)
	}
	if res := call(`{"name":"release-notes","file":"../review/SKILL.md"}`); !res.IsError || !strings.Contains(res.Content, "inside the skill's directory") {
		t.Fatalf("escape = %+v", res)
	}
	if res := call(`{"name":"deploy-check"}`); res.IsError || !strings.Contains(res.Content, "Run the tests.") {
		t.Fatalf("operator skill = %+v", res)
	}
	if res := call(`{"name":"nope"}`); !res.IsError || !strings.Contains(res.Content, "code-review, deploy-check, release-notes") {
		t.Fatalf("unknown = %+v", res)
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"---\nname: Bad_Name\ndescription: d\n---\n", "lower-case letters"},
		{"---\nname: ok\ndescription: d\n", `not closed by a "---" line`},
		{"---\ndescription: d\n---\n", "has no name"},
		{"---\nname: a\ndescription: " + strings.Repeat("x", 1025) + "\n---\n", "more than 1024"},
	} {
		if _, _, err := skills.Parse([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: %v, want %q", tc.in, err, tc.want)
		}
	}
	sk, body, err := skills.Parse([]byte("---\r\nname: ok\r\ndescription: fine\r\n---\r\nbody\r\n"))
	if err != nil || sk.Name != "ok" || body != "body\n" {
		t.Fatalf("CRLF file: %+v %q %v", sk, body, err)
	}
}
