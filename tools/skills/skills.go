package skills

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agentfleet/agentfleet/execenv"
)

// RepoDirs are the repository directories searched for skills, in order.
var RepoDirs = []string{".agents/skills", ".claude/skills"}

// Bounds of a skill's front matter.
const (
	MaxNameLen        = 64
	MaxDescriptionLen = 1024
	maxSkillFile      = 256 << 10
)

var namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Skill is one found skill.
type Skill struct {
	Name        string
	Description string
	// Dir is the skill's directory as its source sees it (relative to the
	// workspace for a repository skill).
	Dir string
	// Origin says where it was found: "repository" or the operator's directory.
	Origin string
	src    execenv.Environment
}

// Problem is a SKILL.md that was skipped.
type Problem struct { //nolint:errname // reported in a list of skipped files; Error only formats one
	Path string
	Err  error
}

func (p Problem) Error() string { return fmt.Sprintf("skill file %s skipped: %v", p.Path, p.Err) }

// Set is the skills of a session, sorted by name.
type Set struct {
	skills []Skill
}

// Skills returns the skills, sorted by name.
func (s *Set) Skills() []Skill { return s.skills }

// Get returns the named skill.
func (s *Set) Get(name string) (Skill, bool) {
	for _, sk := range s.skills {
		if sk.Name == name {
			return sk, true
		}
	}
	return Skill{}, false
}

// Discover finds the skills of the repository in env and of the operator's
// dirs (directories on this machine). Problems are the files it skipped;
// an error is returned only when ctx ends.
func Discover(ctx context.Context, env execenv.Environment, dirs []string) (*Set, []Problem, error) {
	set := &Set{}
	var problems []Problem
	seen := map[string]string{}
	add := func(src execenv.Environment, root, origin string) error {
		found, probs, err := scan(ctx, src, root, origin)
		if err != nil {
			return err
		}
		problems = append(problems, probs...)
		for _, sk := range found {
			if first, dup := seen[sk.Name]; dup {
				problems = append(problems, Problem{Path: path.Join(sk.Dir, "SKILL.md"),
					Err: fmt.Errorf("the name %q is taken by %s", sk.Name, first)})
				continue
			}
			seen[sk.Name] = path.Join(sk.Dir, "SKILL.md")
			set.skills = append(set.skills, sk)
		}
		return nil
	}
	if env != nil {
		for _, d := range RepoDirs {
			if err := add(env, d, "repository"); err != nil {
				return nil, nil, err
			}
		}
	}
	for _, d := range dirs {
		local, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: d, CreateOnFirstUse: true, NoRipgrep: true})
		if err != nil {
			problems = append(problems, Problem{Path: d, Err: err})
			continue
		}
		if err := add(local, ".", d); err != nil {
			return nil, nil, err
		}
	}
	sort.SliceStable(set.skills, func(i, j int) bool { return set.skills[i].Name < set.skills[j].Name })
	return set, problems, nil
}

// scan reads root/*/SKILL.md in src.
func scan(ctx context.Context, src execenv.Environment, root, origin string) ([]Skill, []Problem, error) {
	entries, err := src.List(ctx, root, 2)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, nil // no such directory: no skills there
	}
	var found []Skill
	var problems []Problem
	for _, e := range entries {
		dir, file := path.Split(e.Name)
		if e.IsDir || file != "SKILL.md" || strings.Count(e.Name, "/") != 1 {
			continue
		}
		p := path.Join(root, e.Name)
		sk, err := load(ctx, src, p)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			problems = append(problems, Problem{Path: displayPath(origin, p), Err: err})
			continue
		}
		sk.Dir, sk.Origin, sk.src = path.Join(root, strings.TrimSuffix(dir, "/")), origin, src
		found = append(found, sk)
	}
	return found, problems, nil
}

// displayPath names a file for a warning.
func displayPath(origin, p string) string {
	if origin == "repository" {
		return p
	}
	return path.Join(origin, p)
}

// load reads and parses one SKILL.md.
func load(ctx context.Context, src execenv.Environment, p string) (Skill, error) {
	data, err := src.ReadFile(ctx, p)
	if err != nil {
		return Skill{}, err
	}
	fm, _, err := Parse(data)
	return fm, err
}

// frontMatter is the YAML head of SKILL.md.
type frontMatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// Parse splits a SKILL.md into its front matter (name and description)
// and its body, checking the front matter.
func Parse(data []byte) (Skill, string, error) {
	if len(data) > maxSkillFile {
		return Skill{}, "", fmt.Errorf("the file is %d bytes, more than %d", len(data), maxSkillFile)
	}
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return Skill{}, "", errors.New(`it does not start with front matter: the first line must be "---", then name: and description:, then "---"`)
	}
	head, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		head, ok = strings.CutSuffix(rest, "\n---")
		if !ok {
			return Skill{}, "", errors.New(`the front matter is not closed by a "---" line`)
		}
	}
	var fm frontMatter
	dec := yaml.NewDecoder(bytes.NewReader([]byte(head)))
	if err := dec.Decode(&fm); err != nil {
		return Skill{}, "", fmt.Errorf("the front matter is not valid YAML: %v", err)
	}
	fm.Name, fm.Description = strings.TrimSpace(fm.Name), strings.TrimSpace(fm.Description)
	switch {
	case fm.Name == "":
		return Skill{}, "", errors.New("the front matter has no name")
	case len(fm.Name) > MaxNameLen || !namePattern.MatchString(fm.Name):
		return Skill{}, "", fmt.Errorf("the name %q must be lower-case letters, digits and single hyphens, at most %d characters", fm.Name, MaxNameLen)
	case fm.Description == "":
		return Skill{}, "", errors.New("the front matter has no description (say when the skill applies)")
	case len(fm.Description) > MaxDescriptionLen:
		return Skill{}, "", fmt.Errorf("the description is %d characters, more than %d", len(fm.Description), MaxDescriptionLen)
	}
	return Skill{Name: fm.Name, Description: fm.Description}, strings.TrimLeft(body, "\n"), nil
}
