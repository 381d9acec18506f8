package profiles_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/internal/golden"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/profiles"
	"github.com/agentfleet/agentfleet/tools"
)

// TestProfileToolsets checks that each profile offers its native tool
// set (openai apply_patch, anthropic edit_file old_string/new_string,
// gemini read_many_files and list_dir) with the native parameter names.
func TestProfileToolsets(t *testing.T) {
	tests := []struct {
		p      *profiles.Profile
		tools  []string
		params map[string][]string
		shell  time.Duration
	}{
		{profiles.OpenAI(""), []string{"read_file", "apply_patch", "write_file", "shell", "grep", "glob"},
			map[string][]string{"apply_patch": {"input"}, "shell": {"command", "workdir", "timeout_ms"}}, 10 * time.Second},
		{profiles.Anthropic(""), []string{"read_file", "write_file", "edit_file", "shell", "grep", "glob"},
			map[string][]string{"edit_file": {"file_path", "old_string", "new_string", "replace_all"},
				"shell": {"command", "timeout", "description"}, "grep": {"pattern", "path", "glob", "output_mode", "-i", "head_limit"}}, 120 * time.Second},
		{profiles.Gemini(""), []string{"read_file", "read_many_files", "write_file", "edit_file", "shell", "grep", "glob", "list_dir"},
			map[string][]string{"read_file": {"file_path", "start_line", "end_line"}, "read_many_files": {"include"},
				"edit_file": {"file_path", "instruction", "old_string", "new_string", "allow_multiple"},
				"shell":     {"command", "description", "dir_path", "timeout_seconds"}, "list_dir": {"dir_path", "depth"}}, 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.p.ID(), func(t *testing.T) {
			var names []string
			for _, d := range tt.p.Tools() {
				names = append(names, d.Name)
			}
			if !slices.Equal(names, tt.tools) {
				t.Fatalf("tools = %v, want %v", names, tt.tools)
			}
			for tool, want := range tt.params {
				got := paramNames(t, tt.p.Registry(), tool)
				if !slices.Equal(got, sorted(want)) {
					t.Errorf("%s params = %v, want %v", tool, got, sorted(want))
				}
			}
			if tt.p.DefaultCommandTimeout() != tt.shell {
				t.Errorf("shell default = %s, want %s", tt.p.DefaultCommandTimeout(), tt.shell)
			}
			if tt.p.ContextWindow() <= 0 || !tt.p.SupportsStreaming() || !tt.p.SupportsReasoning() {
				t.Errorf("capabilities = %+v", tt.p.Capabilities())
			}
		})
	}
}

func paramNames(t *testing.T, reg *tools.Registry, name string) []string {
	t.Helper()
	tool, ok := reg.Get(name)
	if !ok {
		t.Fatalf("no tool %s", name)
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(tool.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	var names []string
	for k := range schema.Properties {
		names = append(names, k)
	}
	return sorted(names)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestToolSchemasGolden pins each profile's model-facing tool definitions.
func TestToolSchemasGolden(t *testing.T) {
	for _, p := range allProfiles() {
		t.Run(p.ID(), func(t *testing.T) {
			got, err := json.MarshalIndent(p.Tools(), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", p.ID()+"_tools.golden.json"), got)
		})
	}
}

// TestCustomToolRegistration checks that custom tools register on top
// of any profile and a name collision is won by the latest registration.
func TestCustomToolRegistration(t *testing.T) {
	custom := tools.Tool{Name: "run_tests", Description: "Run the test suite", Parameters: json.RawMessage(`{"type":"object"}`),
		Run: func(context.Context, tools.Call) (tools.Output, error) { return tools.Output{Text: "ok"}, nil }}
	override := tools.Tool{Name: "shell", Description: "custom shell", Parameters: json.RawMessage(`{"type":"object"}`),
		Run: func(context.Context, tools.Call) (tools.Output, error) { return tools.Output{Text: "custom"}, nil }}
	for _, p := range []*profiles.Profile{profiles.OpenAI(""), profiles.Anthropic(""), profiles.Gemini("", profiles.WithTools(custom))} {
		p.Registry().Register(custom)
		p.Registry().Register(override)
		if _, ok := p.Registry().Get("run_tests"); !ok {
			t.Errorf("%s: custom tool missing", p.ID())
		}
		got, _ := p.Registry().Get("shell")
		if got.Description != "custom shell" {
			t.Errorf("%s: collision not won by the latest registration", p.ID())
		}
	}
}

func TestProviderOptions(t *testing.T) {
	a := profiles.Anthropic("", profiles.WithBetaHeaders("context-1m-2025-08-07"))
	o := a.ProviderOptions("high")
	beta, _ := o.Strings("anthropic", "beta_headers")
	if !slices.Equal(beta, []string{"context-1m-2025-08-07", profiles.AnthropicInterleavedThinking}) {
		t.Errorf("beta headers = %v", beta)
	}
	if beta, _ := a.ProviderOptions("").Strings("anthropic", "beta_headers"); len(beta) != 1 {
		t.Errorf("interleaved thinking without an effort: %v", beta)
	}
	g := profiles.Gemini("").ProviderOptions("low")
	if b, _, _ := g.Bool("gemini", "include_thoughts"); !b {
		t.Error("gemini thoughts not included with an effort")
	}
	if _, ok := g.Value("gemini", "safety_settings"); !ok {
		t.Error("gemini safety settings missing")
	}
	oa := profiles.OpenAI("").ProviderOptions("medium")
	if s, ok := oa.Value("openai", "reasoning_summary"); !ok || s != "auto" {
		t.Errorf("openai options = %v", oa)
	}
	var _ llm.ProviderOptions = oa
}

func TestForProvider(t *testing.T) {
	for name, want := range map[string]string{"openai": "openai", "chatcompat": "openai", "anthropic": "anthropic", "gemini": "gemini"} {
		p, err := profiles.ForProvider(name, "some-model")
		if err != nil || p.ID() != want || p.Model() != "some-model" {
			t.Errorf("ForProvider(%q) = %v, %v", name, p, err)
		}
	}
	if _, err := profiles.ForProvider("cohere", "x"); err == nil {
		t.Error("unknown provider accepted")
	}
}

func TestUnknownOpenAICompatibleModelGetsAConservativeWindow(t *testing.T) {
	if got := profiles.OpenAI("qwen2.5-coder:7b").ContextWindow(); got != profiles.DefaultUnknownContextWindow {
		t.Errorf("unknown model window = %d, want %d (never the 400k of gpt-5)", got, profiles.DefaultUnknownContextWindow)
	}
	if got := profiles.OpenAI("qwen2.5-coder:7b", profiles.WithUnknownModelWindow(65536)).ContextWindow(); got != 65536 {
		t.Errorf("WithUnknownModelWindow: %d", got)
	}
	if got := profiles.OpenAI("gpt-5.2-codex", profiles.WithUnknownModelWindow(65536)).ContextWindow(); got != 400_000 {
		t.Errorf("a known model kept %d, want 400000", got)
	}
	if got := profiles.OpenAI("gpt-4o-mini").ContextWindow(); got != 128_000 {
		t.Errorf("gpt-4o-mini window %d", got)
	}
}

// TestEveryToolDeclaresItsPaths: the permission layer reads a call's paths
// from the tool (tools.Tool.Paths); a tool without them would be treated
// as one that may touch any path. Only the shell is decided by its
// command. Each profile's path arguments are read, whatever they are named.
func TestEveryToolDeclaresItsPaths(t *testing.T) {
	args := map[string]string{"file_path": `{"file_path":"a/b.go"}`, "path": `{"path":"a/b.go"}`,
		"dir_path": `{"dir_path":"a/b.go"}`, "include": `{"include":["a/b.go"]}`,
		"input": `{"input":"*** Begin Patch\n*** Add File: a/b.go\n+x\n*** End Patch"}`}
	for _, p := range profiles.All() {
		for _, name := range p.Registry().Names() {
			tool, _ := p.Registry().Get(name)
			if name == "shell" {
				continue
			}
			if tool.Paths == nil {
				t.Errorf("%s %s does not declare its paths", p.ID(), name)
				continue
			}
			var schema struct {
				Properties map[string]any `json:"properties"`
			}
			_ = json.Unmarshal(tool.Parameters, &schema)
			for field, a := range args {
				if _, ok := schema.Properties[field]; !ok {
					continue
				}
				if got, err := tool.Paths(json.RawMessage(a)); err != nil || !slices.Equal(got, []string{"a/b.go"}) {
					t.Errorf("%s %s reads %s as %v, %v", p.ID(), name, a, got, err)
				}
			}
		}
	}
}
