package tools

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"github.com/agentfleet/agentfleet/execenv"
)

//go:embed glob.md
var globDescription string

// GlobParams are the arguments of the glob tool.
type GlobParams struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
}

const globSchema = `{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "minLength": 1, "description": "Glob pattern, e.g. \"**/*.go\"; ** matches any number of directories."},
    "path": {"type": "string", "description": "Directory to search from; the working directory when omitted."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

// Glob returns the core glob tool.
func Glob() Tool {
	return Typed(coreTool("glob", globDescription, globSchema, false, ArgPaths("path")), RunGlob)
}

// RunGlob lists files matching a pattern, newest first.
func RunGlob(ctx context.Context, call Call, p GlobParams) (Output, error) {
	res, err := call.Env.Glob(ctx, execenv.GlobRequest{Pattern: p.Pattern, Path: p.Path})
	if err != nil {
		return Output{}, err
	}
	return Output{Text: FormatGlob(res)}, nil
}

// FormatGlob renders glob paths one per line, noting a cut list.
func FormatGlob(res execenv.GlobResult) string {
	if len(res.Paths) == 0 {
		return "No files matched."
	}
	out := strings.Join(res.Paths, "\n")
	if res.Truncated {
		out += fmt.Sprintf("\n[Showing the %d most recently modified of %d matching files; use a narrower pattern or path to see others.]", len(res.Paths), res.Total)
	}
	return out
}
