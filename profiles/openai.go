package profiles

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/agentfleet/agentfleet/tools"
)

// OpenAI returns the codex-rs shaped profile for GPT models (and, over
// llm/chatcompat, for OpenAI-compatible servers): read_file, apply_patch
// (v4a, argument "input"), write_file, shell (string command, workdir,
// timeout_ms; 10 s default), grep and glob, plus the session's subagent
// tools.
func OpenAI(model string, opts ...Option) *Profile {
	if model == "" {
		model = "gpt-5.2-codex"
	}
	p := &Profile{
		id: "openai", model: model, unknownWindow: !knownModel(model),
		registry: tools.NewRegistry(openaiTools()...),
		docFiles: []string{"AGENTS.md", ".codex/instructions.md"},
		base:     "openai",
		caps:     Capabilities{Reasoning: true, Streaming: true, ParallelToolCalls: true, ContextWindow: contextWindow(model, DefaultUnknownContextWindow)},
		shell:    defaultShellTimeout,
		options:  openaiOptions,
	}
	return p.apply(opts)
}

// openaiTools are built once (see anthropicTools).
var openaiTools = sync.OnceValue(func() []tools.Tool {
	return []tools.Tool{tools.ReadFile(), openaiApplyPatch(), tools.WriteFile(), openaiShell(), tools.Grep(), tools.Glob()}
})

type openaiPatchParams struct {
	Input string `json:"input"`
}

func openaiApplyPatch() tools.Tool {
	return tools.Typed(tools.Tool{
		Name: "apply_patch", Description: describe("openai", "apply_patch"), Mutates: true, Paths: tools.PatchPaths("input"),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"input":{"type":"string","minLength":1,"description":"The whole patch, from *** Begin Patch to *** End Patch."}},` +
			`"required":["input"],"additionalProperties":false}`),
	}, func(ctx context.Context, call tools.Call, p openaiPatchParams) (tools.Output, error) {
		return tools.RunApplyPatch(ctx, call, p.Input)
	})
}

type openaiShellParams struct {
	Command   string `json:"command"`
	Workdir   string `json:"workdir"`
	TimeoutMs int    `json:"timeout_ms"`
}

// openaiShell states the session's timeouts (tools.Settled).
func openaiShell() tools.Tool {
	return tools.Settled(func(s tools.Settings) tools.Tool {
		fill := func(text string) string { return s.FillTimeouts(text, defaultShellTimeout) }
		return tools.Typed(tools.Tool{
			Name: "shell", Description: fill(describe("openai", "shell")), Mutates: true,
			Parameters: json.RawMessage(fill(`{"type":"object","properties":{` +
				`"command":{"type":"string","minLength":1,"description":"The command line, run with bash -c."},` +
				`"workdir":{"type":"string","description":"Directory to run in; the working directory when omitted."},` +
				`"timeout_ms":{"type":"integer","minimum":1,"description":"Timeout in milliseconds (default {default_ms}, at most {max_ms})."}},` +
				`"required":["command"],"additionalProperties":false}`)),
		}, func(ctx context.Context, call tools.Call, p openaiShellParams) (tools.Output, error) {
			return tools.RunShell(ctx, call, tools.ShellParams{Command: p.Command, Workdir: p.Workdir, TimeoutMs: p.TimeoutMs})
		})
	})
}
