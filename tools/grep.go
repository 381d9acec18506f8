package tools

import (
	"context"
	_ "embed"
	"fmt"
	"regexp"
	"strings"

	"github.com/agentfleet/agentfleet/execenv"
)

//go:embed grep.md
var grepDescription string

// GrepParams are the arguments of the grep tool.
type GrepParams struct {
	Pattern         string `json:"pattern"`
	Path            string `json:"path,omitempty"`
	GlobFilter      string `json:"glob_filter,omitempty"`
	CaseInsensitive bool   `json:"case_insensitive,omitempty"`
	MaxResults      int    `json:"max_results,omitempty"`
	OutputMode      string `json:"output_mode,omitempty"`
}

const grepSchema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "minLength": 1, "description": "Regular expression (RE2 / ripgrep syntax)."},
    "path": {"type": "string", "description": "File or directory to search; the working directory when omitted."},
    "glob_filter": {"type": "string", "description": "Only search files matching this glob, e.g. \"*.go\"."},
    "case_insensitive": {"type": "boolean", "description": "Ignore case (default false)."},
    "max_results": {"type": "integer", "minimum": 1, "description": "Maximum rows to return (default 100)."},
    "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"], "description": "content: matching lines (default); files_with_matches: file paths; count: matches per file."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

// Grep returns the core grep tool.
func Grep() Tool {
	return Typed(coreTool("grep", grepDescription, grepSchema, false, ArgPaths("path")), RunGrep)
}

// RunGrep searches file contents through call.Env. The pattern is checked
// first so that a bad regular expression gets a precise error.
func RunGrep(ctx context.Context, call Call, p GrepParams) (Output, error) {
	if _, err := regexp.Compile(p.Pattern); err != nil {
		return Output{}, fmt.Errorf("pattern %q is not a valid regular expression: %v (escape special characters such as ( [ { . * + ? with a backslash to match them literally)", p.Pattern, unwrapRegexpErr(err))
	}
	mode := execenv.GrepMode(p.OutputMode)
	if mode == "" {
		mode = execenv.GrepContent
	}
	res, err := call.Env.Grep(ctx, execenv.GrepRequest{
		Pattern: p.Pattern, Path: p.Path, Glob: p.GlobFilter,
		CaseInsensitive: p.CaseInsensitive, Mode: mode, MaxResults: p.MaxResults,
	})
	if err != nil {
		return Output{}, err
	}
	return Output{Text: FormatGrep(res, mode, p.MaxResults)}, nil
}

func unwrapRegexpErr(err error) string {
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

// FormatGrep renders grep rows for the model: "path:line:text",
// "path" or "path:count" per row by mode.
func FormatGrep(res execenv.GrepResult, mode execenv.GrepMode, maxResults int) string {
	var b strings.Builder
	var rows int
	switch mode {
	case execenv.GrepFilesWithMatches:
		for _, f := range res.Files {
			b.WriteString(f + "\n")
		}
		rows = len(res.Files)
	case execenv.GrepCount:
		for _, c := range res.Counts {
			fmt.Fprintf(&b, "%s:%d\n", c.Path, c.Count)
		}
		rows = len(res.Counts)
	default:
		for _, m := range res.Matches {
			fmt.Fprintf(&b, "%s:%d:%s\n", m.Path, m.Line, strings.ToValidUTF8(m.Text, "\uFFFD"))
		}
		rows = len(res.Matches)
	}
	if rows == 0 {
		return "No matches found."
	}
	if res.Truncated {
		if maxResults <= 0 {
			maxResults = 100
		}
		fmt.Fprintf(&b, "[Results stopped at %d; narrow the pattern or path, or raise max_results, to see more.]", maxResults)
	}
	return strings.TrimRight(b.String(), "\n")
}
