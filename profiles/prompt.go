package profiles

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"strings"
	"text/template"

	"github.com/agentfleet/agentfleet/execenv"
)

//go:embed prompts/*.tmpl
var promptFS embed.FS

var promptTemplates = template.Must(template.New("").Funcs(template.FuncMap{
	"trim": strings.TrimSpace,
}).ParseFS(promptFS, "prompts/*.tmpl"))

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
}

// ToolLine is one tool in the prompt's tool summary.
type ToolLine struct{ Name, Summary string }

// BuildSystemPrompt renders the layered system prompt of spec 6: the
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
	for _, def := range p.registry.Definitions() {
		d.Tools = append(d.Tools, ToolLine{Name: def.Name, Summary: firstSentence(def.Description)})
	}
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

// Render renders data with the profile's templates.
func (p *Profile) Render(data PromptData) (string, error) {
	var base, all bytes.Buffer
	if err := promptTemplates.ExecuteTemplate(&base, p.base+".tmpl", data); err != nil {
		return "", fmt.Errorf("profiles: render %s base prompt: %w", p.id, err)
	}
	err := promptTemplates.ExecuteTemplate(&all, "system.tmpl", struct {
		Base string
		PromptData
	}{strings.TrimSpace(base.String()), data})
	if err != nil {
		return "", fmt.Errorf("profiles: render %s system prompt: %w", p.id, err)
	}
	return strings.TrimSpace(all.String()) + "\n", nil
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
