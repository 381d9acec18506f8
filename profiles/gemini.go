package profiles

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/agentfleet/agentfleet/tools"
)

// Gemini returns the gemini-cli shaped profile: read_file (start_line,
// end_line), read_many_files (include), write_file, edit_file (instruction,
// old_string, new_string, allow_multiple), shell (command, description,
// dir_path, timeout_seconds; 10 s default), grep (dir_path, include_pattern, names_only,
// total_max_matches), glob (dir_path) and list_dir (dir_path, depth), plus
// the session's subagent tools. web_fetch needs network policy: add it with
// WithTools(tools.WebFetch(cfg)).
func Gemini(model string, opts ...Option) *Profile {
	if model == "" {
		model = "gemini-2.5-pro"
	}
	p := &Profile{
		id: "gemini", model: model,
		registry: tools.NewRegistry(geminiTools()...),
		docFiles: []string{"AGENTS.md", "GEMINI.md"},
		base:     "gemini",
		caps:     Capabilities{Reasoning: true, Streaming: true, ParallelToolCalls: true, ContextWindow: contextWindow(model, 1_048_576)},
		shell:    defaultShellTimeout,
		options:  geminiOptions,
	}
	return p.apply(opts)
}

// geminiTools are built once (see anthropicTools).
var geminiTools = sync.OnceValue(func() []tools.Tool {
	return []tools.Tool{geminiReadFile(), geminiReadManyFiles(), tools.WriteFile(), geminiEditFile(),
		geminiShell(), geminiGrep(), geminiGlob(), geminiListDir()}
})

type geminiReadParams struct {
	FilePath  string `json:"file_path"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
}

func geminiReadFile() tools.Tool {
	return tools.Typed(tools.Tool{
		Name: "read_file", Description: describe("gemini", "read_file"), Paths: tools.ArgPaths("file_path"),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"file_path":{"type":"string","minLength":1,"description":"Path of the file to read."},` +
			`"start_line":{"type":"integer","minimum":1,"description":"First line to read, 1-based."},` +
			`"end_line":{"type":"integer","minimum":1,"description":"Last line to read, 1-based and inclusive."}},` +
			`"required":["file_path"],"additionalProperties":false}`),
	}, func(ctx context.Context, call tools.Call, p geminiReadParams) (tools.Output, error) {
		if p.EndLine > 0 && p.StartLine > p.EndLine {
			return tools.Output{}, fmt.Errorf("start_line %d is after end_line %d", p.StartLine, p.EndLine)
		}
		limit := 0
		if p.EndLine > 0 {
			limit = p.EndLine - max(p.StartLine, 1) + 1
		}
		return tools.RunReadFile(ctx, call, tools.ReadFileParams{FilePath: p.FilePath, Offset: p.StartLine, Limit: limit})
	})
}

type geminiManyParams struct {
	Include []string `json:"include"`
}

func geminiReadManyFiles() tools.Tool {
	return tools.Typed(tools.Tool{
		Name: "read_many_files", Description: describe("gemini", "read_many_files"), Paths: tools.ArgPaths("include"),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"include":{"type":"array","minItems":1,"items":{"type":"string","minLength":1},"description":"Paths or glob patterns (e.g. \"src/**/*.go\") of the files to read."}},` +
			`"required":["include"],"additionalProperties":false}`),
	}, func(ctx context.Context, call tools.Call, p geminiManyParams) (tools.Output, error) {
		return tools.RunReadManyFiles(ctx, call, tools.ReadManyFilesParams{Paths: p.Include})
	})
}

type geminiEditParams struct {
	FilePath      string `json:"file_path"`
	Instruction   string `json:"instruction"`
	OldString     string `json:"old_string"`
	NewString     string `json:"new_string"`
	AllowMultiple bool   `json:"allow_multiple"`
}

func geminiEditFile() tools.Tool {
	return tools.Typed(tools.Tool{
		Name: "edit_file", Description: describe("gemini", "edit_file"), Mutates: true, Paths: tools.ArgPaths("file_path"),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"file_path":{"type":"string","minLength":1,"description":"Path of the file to change."},` +
			`"instruction":{"type":"string","description":"One sentence on what this change does and why."},` +
			`"old_string":{"type":"string","description":"The exact text to replace, with enough surrounding lines to be unique. Empty creates a new file."},` +
			`"new_string":{"type":"string","description":"The text to put in its place."},` +
			`"allow_multiple":{"type":"boolean","description":"Replace every occurrence instead of requiring exactly one."}},` +
			`"required":["file_path","instruction","old_string","new_string"],"additionalProperties":false}`),
	}, func(ctx context.Context, call tools.Call, p geminiEditParams) (tools.Output, error) {
		return tools.RunEditFile(ctx, call, tools.EditFileParams{FilePath: p.FilePath, OldString: p.OldString,
			NewString: p.NewString, ReplaceAll: p.AllowMultiple})
	})
}

type geminiShellParams struct {
	Command        string `json:"command"`
	Description    string `json:"description"`
	DirPath        string `json:"dir_path"`
	TimeoutSeconds int    `json:"timeout_seconds"`
}

// geminiShell states the session's timeouts (tools.Settled).
func geminiShell() tools.Tool {
	return tools.Settled(func(s tools.Settings) tools.Tool {
		fill := func(text string) string { return s.FillTimeouts(text, defaultShellTimeout) }
		hint := fill(geminiTimeoutHint)
		return tools.Typed(tools.Tool{
			Name: "shell", Description: fill(describe("gemini", "shell")), Mutates: true,
			Parameters: json.RawMessage(fill(`{"type":"object","properties":{` +
				`"command":{"type":"string","minLength":1,"description":"The command to run with bash -c."},` +
				`"description":{"type":"string","description":"A short note on what the command does."},` +
				`"dir_path":{"type":"string","description":"Directory to run in, relative to the working directory."},` +
				`"timeout_seconds":{"type":"integer","minimum":1,"description":"Seconds the command may run before it is stopped (at most {max_s}); the session default ({default_s}) when omitted. Give builds and test suites more."}},` +
				`"required":["command"],"additionalProperties":false}`)),
		}, func(ctx context.Context, call tools.Call, p geminiShellParams) (tools.Output, error) {
			return tools.RunShell(ctx, call, tools.ShellParams{Command: p.Command, Description: p.Description, Workdir: p.DirPath,
				TimeoutMs: p.TimeoutSeconds * 1000, TimeoutHint: hint})
		})
	})
}

type geminiGrepParams struct {
	Pattern         string `json:"pattern"`
	DirPath         string `json:"dir_path"`
	IncludePattern  string `json:"include_pattern"`
	NamesOnly       bool   `json:"names_only"`
	TotalMaxMatches int    `json:"total_max_matches"`
}

func geminiGrep() tools.Tool {
	return tools.Typed(tools.Tool{
		Name: "grep", Description: describe("gemini", "grep"), Paths: tools.ArgPaths("dir_path"),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"pattern":{"type":"string","minLength":1,"description":"Regular expression to search for."},` +
			`"dir_path":{"type":"string","description":"Directory to search; the working directory when omitted."},` +
			`"include_pattern":{"type":"string","description":"Only files matching this glob, e.g. \"*.py\"."},` +
			`"names_only":{"type":"boolean","description":"List matching file paths only."},` +
			`"total_max_matches":{"type":"integer","minimum":1,"description":"At most this many matches (default 100)."}},` +
			`"required":["pattern"],"additionalProperties":false}`),
	}, func(ctx context.Context, call tools.Call, p geminiGrepParams) (tools.Output, error) {
		mode := "content"
		if p.NamesOnly {
			mode = "files_with_matches"
		}
		return tools.RunGrep(ctx, call, tools.GrepParams{Pattern: p.Pattern, Path: p.DirPath, GlobFilter: p.IncludePattern,
			MaxResults: p.TotalMaxMatches, OutputMode: mode})
	})
}

type geminiGlobParams struct {
	Pattern string `json:"pattern"`
	DirPath string `json:"dir_path"`
}

func geminiGlob() tools.Tool {
	return tools.Typed(tools.Tool{
		Name: "glob", Description: describe("gemini", "glob"), Paths: tools.ArgPaths("dir_path"),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"pattern":{"type":"string","minLength":1,"description":"Glob pattern, e.g. \"**/*.go\"."},` +
			`"dir_path":{"type":"string","description":"Directory to search from; the working directory when omitted."}},` +
			`"required":["pattern"],"additionalProperties":false}`),
	}, func(ctx context.Context, call tools.Call, p geminiGlobParams) (tools.Output, error) {
		return tools.RunGlob(ctx, call, tools.GlobParams{Pattern: p.Pattern, Path: p.DirPath})
	})
}

type geminiListParams struct {
	DirPath string `json:"dir_path"`
	Depth   int    `json:"depth"`
}

func geminiListDir() tools.Tool {
	return tools.Typed(tools.Tool{
		Name: "list_dir", Description: describe("gemini", "list_dir"), Paths: tools.ArgPaths("dir_path"),
		Parameters: json.RawMessage(`{"type":"object","properties":{` +
			`"dir_path":{"type":"string","minLength":1,"description":"Directory to list."},` +
			`"depth":{"type":"integer","minimum":1,"maximum":5,"description":"How many levels to descend (default 2)."}},` +
			`"required":["dir_path"],"additionalProperties":false}`),
	}, func(ctx context.Context, call tools.Call, p geminiListParams) (tools.Output, error) {
		return tools.RunListDir(ctx, call, tools.ListDirParams{Path: p.DirPath, Depth: p.Depth})
	})
}

// geminiTimeoutHint names this shell's timeout argument. gemini-cli's
// shell, which Gemini models know, takes no timeout, and this profile's
// 10 s default (as openai's) stops every build; rather than a longer default for one
// profile, the shell gets an optional timeout_seconds in the style of its
// other arguments (snake_case, whole units), capped like every shell
// timeout by the session's maximum, and a timed-out command is told to use
// it. A task can also raise the default (session.command_timeout).
const geminiTimeoutHint = "You can retry with a longer timeout by setting the timeout_seconds parameter (at most {max_s}), " +
	"or run a long command in the background with its output in a file and read the file later."
