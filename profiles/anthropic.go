package profiles

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/agentfleet/agentfleet/tools"
)

// Anthropic returns the Claude Code shaped profile: read_file, write_file,
// edit_file (old_string/new_string, replace_all), shell (command, timeout in
// ms, description; 120 s default), grep (output modes content,
// files_with_matches, count) and glob, plus the session's subagent tools.
func Anthropic(model string, opts ...Option) *Profile {
	if model == "" {
		model = "claude-sonnet-4-5"
	}
	p := &Profile{
		id: "anthropic", model: model,
		registry: tools.NewRegistry(anthropicTools()...),
		docFiles: []string{"AGENTS.md", "CLAUDE.md"},
		base:     "anthropic",
		caps:     Capabilities{Reasoning: true, Streaming: true, ParallelToolCalls: true, ContextWindow: contextWindow(model, 200_000)},
		shell:    anthropicShellTimeout,
	}
	p.options = p.anthropicOptions
	return p.apply(opts)
}

// anthropicTools are built once: a profile is made per session, and the
// tools are immutable values its registry copies.
var anthropicTools = sync.OnceValue(func() []tools.Tool {
	return []tools.Tool{tools.ReadFile(), tools.WriteFile(), tools.EditFile(), anthropicShell(), anthropicGrep(), tools.Glob()}
})

type anthropicShellParams struct {
	Command     string `json:"command"`
	Timeout     int    `json:"timeout"`
	Description string `json:"description"`
}

// anthropicShell states the session's timeouts (tools.Settled): the
// profile's 120 s default until the session settles it.
func anthropicShell() tools.Tool {
	return tools.Settled(func(s tools.Settings) tools.Tool {
		fill := func(text string) string { return s.FillTimeouts(text, anthropicShellTimeout) }
		hint := fill(anthropicTimeoutHint)
		return tools.Typed(tools.Tool{
			Name: "shell", Description: fill(describe("anthropic", "shell")), Mutates: true,
			Parameters: json.RawMessage(fill(`{"type":"object","properties":{` +
				`"command":{"type":"string","minLength":1,"description":"The command to run."},` +
				`"timeout":{"type":"integer","minimum":1,"description":"Timeout in milliseconds (default {default_ms}, at most {max_ms}; a longer one is cut to it)."},` +
				`"description":{"type":"string","description":"Five to ten words on what the command does."}},` +
				`"required":["command"],"additionalProperties":false}`)),
		}, func(ctx context.Context, call tools.Call, p anthropicShellParams) (tools.Output, error) {
			return tools.RunShell(ctx, call, tools.ShellParams{Command: p.Command, TimeoutMs: p.Timeout, Description: p.Description,
				TimeoutHint: hint})
		})
	})
}

type anthropicGrepParams struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path"`
	Glob            string `json:"glob"`
	OutputMode      string `json:"output_mode"`
	CaseInsensitive bool   `json:"-i"`
	HeadLimit       int    `json:"head_limit"`
}

func anthropicGrep() tools.Tool {
	return tools.Typed(tools.Tool{
		Name: "grep", Description: describe("anthropic", "grep"), Paths: tools.ArgPaths("path"),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"pattern":{"type":"string","minLength":1,"description":"Regular expression to search for (ripgrep syntax)."},` +
			`"path":{"type":"string","description":"File or directory to search; the working directory when omitted."},` +
			`"glob":{"type":"string","description":"Only files matching this glob, e.g. \"*.ts\" or \"src/**/*.go\"."},` +
			`"output_mode":{"type":"string","enum":["files_with_matches","content","count"],"description":"files_with_matches (default): paths only; content: matching lines; count: matches per file."},` +
			`"-i":{"type":"boolean","description":"Case-insensitive search."},` +
			`"head_limit":{"type":"integer","minimum":1,"description":"Return at most this many rows."}},` +
			`"required":["pattern"],"additionalProperties":false}`),
	}, func(ctx context.Context, call tools.Call, p anthropicGrepParams) (tools.Output, error) {
		if p.OutputMode == "" {
			p.OutputMode = "files_with_matches"
		}
		return tools.RunGrep(ctx, call, tools.GrepParams{Pattern: p.Pattern, Path: p.Path, GlobFilter: p.Glob,
			CaseInsensitive: p.CaseInsensitive, MaxResults: p.HeadLimit, OutputMode: p.OutputMode})
	})
}

// anthropicTimeoutHint names this shell's own timeout parameter.
const anthropicTimeoutHint = "You can retry with a longer timeout by setting the timeout parameter (milliseconds, at most {max_ms})."
