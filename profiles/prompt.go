package profiles

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"
	"text/template/parse"

	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/llm"
)

//go:embed prompts/*.tmpl
var promptFS embed.FS

var promptTemplates = template.Must(template.New("").Funcs(template.FuncMap{
	"trim": strings.TrimSpace,
}).ParseFS(promptFS, "prompts/*.tmpl"))

// staticBases holds, trimmed, the base instructions whose templates are
// plain text (all of ours), so rendering a prompt does not execute them.
var staticBases = func() map[string]string {
	out := map[string]string{}
	for _, t := range promptTemplates.Templates() {
		if text, ok := plainText(t); ok {
			out[t.Name()] = strings.TrimSpace(text)
		}
	}
	return out
}()

// plainText returns a template's text when it has no actions.
func plainText(t *template.Template) (string, bool) {
	if t.Tree == nil || t.Tree.Root == nil {
		return "", false
	}
	var b strings.Builder
	for _, n := range t.Tree.Root.Nodes {
		text, ok := n.(*parse.TextNode)
		if !ok {
			return "", false
		}
		b.Write(text.Text)
	}
	return b.String(), true
}

// renderBuffers are reused for rendering prompts.
var renderBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledRender keeps the buffer of a prompt with large project docs out
// of the pool.
const maxPooledRender = 256 << 10

// PromptData is everything a system prompt is rendered from.
type PromptData struct {
	Model           string
	KnowledgeCutoff string
	WorkingDir      string
	Platform        string
	OSVersion       string
	Date            string // YYYY-MM-DD
	Git             GitSnapshot
	Tools           []ToolLine
	Docs            []ProjectDoc
	User            string
	// NoSubagents leaves the subagent tools out of the tool summary, for a
	// session that may not spawn (it has no such tools).
	NoSubagents bool
}

// ToolLine is one tool in the prompt's tool summary.
type ToolLine struct{ Name, Summary string }

// BuildSystemPrompt renders the layered system prompt: the
// profile's base instructions, the environment block, the git snapshot, the
// tool summary, the project instruction files, then userInstructions last.
// model "" means the profile's model.
func (p *Profile) BuildSystemPrompt(ctx context.Context, env execenv.Environment, model, userInstructions string) (string, error) {
	data, err := p.PromptData(ctx, env, model, userInstructions)
	if err != nil {
		return "", err
	}
	return p.Render(data)
}

// BuildSystemPromptFor is BuildSystemPrompt for a session that may or may
// not spawn subagents: without subagents the prompt does not mention
// their tools.
func (p *Profile) BuildSystemPromptFor(ctx context.Context, env execenv.Environment, model, userInstructions string, subagents bool) (string, error) {
	data, err := p.PromptData(ctx, env, model, userInstructions)
	if err != nil {
		return "", err
	}
	data.NoSubagents = !subagents
	return p.Render(data)
}

// PromptData gathers the facts the prompt needs from env (git through
// env.Exec, project docs through env.ReadFile).
func (p *Profile) PromptData(ctx context.Context, env execenv.Environment, model, userInstructions string) (PromptData, error) {
	if model == "" {
		model = p.model
	}
	d := PromptData{
		Model: model, KnowledgeCutoff: knowledgeCutoff(model), WorkingDir: env.WorkingDir(),
		Platform: env.Platform(), OSVersion: env.OSVersion(), Date: p.now().Format("2006-01-02"),
		Git: snapshotGit(ctx, env), User: strings.TrimSpace(userInstructions),
	}
	d.Tools = toolLines(p.registry.Definitions())
	root := d.Git.Root
	if root == "" {
		root = d.WorkingDir
	}
	docs, err := DiscoverDocs(ctx, env, root, d.WorkingDir, p.docFiles)
	if err != nil {
		return d, fmt.Errorf("profiles: read project instructions: %w", err)
	}
	d.Docs = docs
	return d, nil
}

// Render renders data with the profile's templates: the base
// instructions, a blank line, then system.tmpl, trimmed and ending with a
// newline.
func (p *Profile) Render(data PromptData) (string, error) {
	buf := renderBuffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledRender {
			renderBuffers.Put(buf)
		}
	}()
	buf.Reset()
	name := p.base + ".tmpl"
	if base, ok := staticBases[name]; ok {
		buf.WriteString(base)
	} else {
		var base strings.Builder
		if err := promptTemplates.ExecuteTemplate(&base, name, data); err != nil {
			return "", fmt.Errorf("profiles: render %s base prompt: %w", p.id, err)
		}
		buf.WriteString(strings.TrimSpace(base.String()))
	}
	buf.WriteString("\n\n")
	if err := promptTemplates.ExecuteTemplate(buf, "system.tmpl", data); err != nil {
		return "", fmt.Errorf("profiles: render %s system prompt: %w", p.id, err)
	}
	return string(append(bytes.TrimSpace(buf.Bytes()), '\n')), nil
}

// maxToolLineSets bounds the tool sets whose summaries are kept.
const maxToolLineSets = 16

// toolLineSets are the tool summaries of the tool sets seen last, newest
// last: every session makes its own profile, but of the same few tool sets.
// Immutable once stored; writers hold toolLineSetsMu.
var (
	toolLineSets   atomic.Pointer[[]*toolLineSet]
	toolLineSetsMu sync.Mutex
)

// toolLines returns the tool summary of defs, computed once per tool set.
func toolLines(defs []llm.ToolDefinition) []ToolLine {
	if len(defs) == 0 {
		return nil
	}
	set := findToolLines(defs)
	if set == nil {
		set = &toolLineSet{defs: make([]llm.ToolDefinition, len(defs)), lines: make([]ToolLine, len(defs))}
		for i, def := range defs {
			set.defs[i] = llm.ToolDefinition{Name: def.Name, Description: def.Description}
			set.lines[i] = ToolLine{Name: def.Name, Summary: firstSentence(def.Description)}
		}
		rememberToolLines(set)
	}
	return append([]ToolLine(nil), set.lines...) // the caller may change its copy
}

func findToolLines(defs []llm.ToolDefinition) *toolLineSet {
	if sets := toolLineSets.Load(); sets != nil {
		for i := range slices.Backward(*sets) {
			if (*sets)[i].same(defs) {
				return (*sets)[i]
			}
		}
	}
	return nil
}

func rememberToolLines(set *toolLineSet) {
	toolLineSetsMu.Lock()
	defer toolLineSetsMu.Unlock()
	var sets []*toolLineSet
	if old := toolLineSets.Load(); old != nil {
		sets = *old
	}
	if len(sets) >= maxToolLineSets {
		sets = sets[1:]
	}
	sets = append(append(make([]*toolLineSet, 0, len(sets)+1), sets...), set)
	toolLineSets.Store(&sets)
}

// toolLineSet is the tool summary of one tool set.
type toolLineSet struct {
	defs  []llm.ToolDefinition // names and descriptions only
	lines []ToolLine
}

func (s *toolLineSet) same(defs []llm.ToolDefinition) bool {
	if len(s.defs) != len(defs) {
		return false
	}
	for i, d := range defs {
		if s.defs[i].Name != d.Name || s.defs[i].Description != d.Description {
			return false
		}
	}
	return true
}

// firstSentence is the first sentence of a description's first paragraph.
func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "\n\n"); i >= 0 {
		s = s[:i]
	}
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return s
}
