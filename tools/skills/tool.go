package skills

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/agentfleet/agentfleet/tools"
)

// ToolName is the name of the skill tool.
const ToolName = "skill"

//go:embed skill.md
var toolDescription string

// Params are the skill tool's arguments.
type Params struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
}

// Tool returns the skill tool over the set.
func (s *Set) Tool() tools.Tool {
	return tools.Typed(tools.Tool{
		Name:        ToolName,
		Description: strings.TrimSpace(toolDescription),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"name":{"type":"string","description":"Name of the skill, as listed in the system prompt."},` +
			`"file":{"type":"string","description":"One of the skill's other files, as the skill lists it; omit to load the skill's instructions."}},` +
			`"required":["name"],"additionalProperties":false}`),
	}, func(ctx context.Context, _ tools.Call, p Params) (tools.Output, error) {
		sk, ok := s.Get(p.Name)
		if !ok {
			return tools.Output{}, fmt.Errorf("no skill is named %q; the skills are: %s", p.Name, strings.Join(s.names(), ", "))
		}
		if p.File != "" {
			return sk.readFile(ctx, p.File)
		}
		return sk.load(ctx)
	})
}

func (s *Set) names() []string {
	out := make([]string, len(s.skills))
	for i, sk := range s.skills {
		out[i] = sk.Name
	}
	return out
}

// load returns the skill's body and the list of its other files.
func (sk Skill) load(ctx context.Context) (tools.Output, error) {
	data, err := sk.src.ReadFile(ctx, path.Join(sk.Dir, "SKILL.md"))
	if err != nil {
		return tools.Output{}, err
	}
	_, body, err := Parse(data)
	if err != nil {
		return tools.Output{}, fmt.Errorf("the skill's SKILL.md changed and no longer parses: %v", err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Skill: %s\n\n%s", sk.Name, strings.TrimSpace(body))
	files, err := sk.otherFiles(ctx)
	if err == nil && len(files) > 0 {
		fmt.Fprintf(&b, "\n\n## Other files of this skill\nRead one with the %s tool (name %q, file set to the path below).\n", ToolName, sk.Name)
		for _, f := range files {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	return tools.Output{Text: b.String()}, nil
}

// otherFiles lists the skill directory's files but SKILL.md (3 levels deep).
func (sk Skill) otherFiles(ctx context.Context) ([]string, error) {
	entries, err := sk.src.List(ctx, sk.Dir, 3)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir && e.Name != "SKILL.md" {
			out = append(out, e.Name)
		}
	}
	return out, nil
}

// readFile reads one of the skill's files; paths may not leave its directory.
func (sk Skill) readFile(ctx context.Context, file string) (tools.Output, error) {
	clean := path.Clean("/" + file)[1:]
	if clean == "" || clean != strings.TrimPrefix(file, "./") {
		return tools.Output{}, fmt.Errorf("file %q must be a path inside the skill's directory, as the skill lists it", file)
	}
	data, err := sk.src.ReadFile(ctx, path.Join(sk.Dir, clean))
	if err != nil {
		return tools.Output{}, fmt.Errorf("reading %s of skill %s: %v", clean, sk.Name, err)
	}
	return tools.Output{Text: string(data)}, nil
}

// Prompt is the system prompt's section listing the skills; "" when there
// are none.
func (s *Set) Prompt() string {
	if len(s.skills) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Skills\n\nThese skills hold instructions for particular kinds of task. When a task matches one's description, call the %s tool with its name first and follow what it returns.\n\n", ToolName)
	for _, sk := range s.skills {
		fmt.Fprintf(&b, "- %s: %s\n", sk.Name, strings.Join(strings.Fields(sk.Description), " "))
	}
	return b.String()
}
