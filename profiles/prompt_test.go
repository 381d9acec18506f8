package profiles_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/internal/golden"

	"github.com/agentfleet/agentfleet/internal/testenv"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/execenv"
	"github.com/agentfleet/agentfleet/profiles"
)

var _ agent.Profile = (*profiles.Profile)(nil)

var fixedNow = func() time.Time { return time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC) }

// project builds a real git repository with instruction files for every
// provider, a nested directory with its own AGENTS.md, one modified and one
// untracked file, and returns a Local environment working in the nested dir.
func project(t *testing.T) (execenv.Environment, string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		testenv.SkipOrFatal(t, "git is not installed")
	}
	root := t.TempDir()
	files := map[string]string{
		"AGENTS.md":              "Run `make test` before finishing.\n",
		"CLAUDE.md":              "Claude: prefer table tests.\n",
		"GEMINI.md":              "Gemini: keep functions short.\n",
		".codex/instructions.md": "Codex: use apply_patch for every edit.\n",
		"svc/AGENTS.md":          "In svc/, never change the public API.\n",
		"svc/main.go":            "package main\n",
		"README.md":              "demo\n",
	}
	for name, content := range files {
		write(t, filepath.Join(root, name), content)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2026-03-01T10:00:00Z", "GIT_COMMITTER_DATE=2026-03-01T10:00:00Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "Initial commit")
	write(t, filepath.Join(root, "README.md"), "demo, changed\n")
	write(t, filepath.Join(root, "notes.txt"), "scratch\n")
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: filepath.Join(root, "svc")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Cleanup(context.Background()) })
	return env, root
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func allProfiles() []*profiles.Profile {
	return []*profiles.Profile{
		profiles.OpenAI("gpt-5.2-codex", profiles.WithClock(fixedNow)),
		profiles.Anthropic("claude-sonnet-4-5", profiles.WithClock(fixedNow)),
		profiles.Gemini("gemini-2.5-pro", profiles.WithClock(fixedNow)),
	}
}

// TestSystemPromptGolden renders each profile's full prompt with a fixed
// clock in a real repository (base instructions, environment,
// tools, project docs, user override last) and compares it to testdata/.
// The temporary path and the machine's OS version are replaced by
// placeholders. Run with -update to rewrite.
func TestSystemPromptGolden(t *testing.T) {
	env, root := project(t)
	for _, p := range allProfiles() {
		t.Run(p.ID(), func(t *testing.T) {
			got, err := p.BuildSystemPrompt(context.Background(), env, "", "Answer in English. Never touch vendor/.")
			if err != nil {
				t.Fatal(err)
			}
			got = strings.ReplaceAll(got, root, "/workspace")
			got = strings.ReplaceAll(got, env.OSVersion(), "<os version>")
			golden.Check(t, filepath.Join("testdata", p.ID()+".golden"), []byte(got))
		})
	}
}

func TestSystemPromptLayers(t *testing.T) {
	env, _ := project(t)
	wantDocs := map[string][]string{
		"openai":    {"Codex: use apply_patch", "Run `make test`"},
		"anthropic": {"Claude: prefer table tests", "Run `make test`"},
		"gemini":    {"Gemini: keep functions short", "Run `make test`"},
	}
	notDocs := map[string][]string{
		"openai":    {"Claude:", "Gemini:"},
		"anthropic": {"Gemini:", "Codex:"},
		"gemini":    {"Claude:", "Codex:"},
	}
	for _, p := range allProfiles() {
		t.Run(p.ID(), func(t *testing.T) {
			got, err := p.BuildSystemPrompt(context.Background(), env, "", "USER OVERRIDE")
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range append(wantDocs[p.ID()], "<environment>", "Platform: linux", "Today's date: 2026-03-14",
				"Model: "+p.Model(), "Git branch: main", "Modified files: 1", "Untracked files: 1", "Initial commit", "read_file:") {
				if !strings.Contains(got, s) {
					t.Errorf("prompt lacks %q", s)
				}
			}
			for _, s := range notDocs[p.ID()] {
				if strings.Contains(got, s) {
					t.Errorf("prompt loads another provider's file: %q", s)
				}
			}
			// Root docs before deeper docs; the user's override last.
			if strings.Index(got, "Run `make test`") > strings.Index(got, "never change the public API") {
				t.Error("deeper AGENTS.md comes before the root one")
			}
			if !strings.HasSuffix(strings.TrimSpace(got), "USER OVERRIDE") {
				t.Error("user instructions are not last")
			}
		})
	}
}

func TestProjectDocsBudget(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "AGENTS.md"), strings.Repeat("a", 20*1024))
	write(t, filepath.Join(dir, "CLAUDE.md"), strings.Repeat("b", 20*1024))
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	docs, err := profiles.DiscoverDocs(context.Background(), env, dir, dir, []string{"AGENTS.md", "CLAUDE.md"})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || !strings.HasSuffix(docs[1].Content, profiles.ProjectDocMarker) {
		t.Fatalf("docs = %d, last ends %q", len(docs), docs[len(docs)-1].Content[len(docs[len(docs)-1].Content)-50:])
	}
	total := len(docs[0].Content) + len(docs[1].Content) - len(profiles.ProjectDocMarker) - 1
	if total != profiles.ProjectDocBudget {
		t.Fatalf("kept %d bytes, want %d", total, profiles.ProjectDocBudget)
	}
}

func TestPromptOutsideGit(t *testing.T) {
	env, err := execenv.NewLocal(execenv.LocalConfig{WorkingDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	got, err := profiles.OpenAI("", profiles.WithClock(fixedNow)).BuildSystemPrompt(context.Background(), env, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "Is git repository: false") || strings.Contains(got, "<git_snapshot>") {
		t.Fatalf("prompt outside git:\n%s", got)
	}
}
