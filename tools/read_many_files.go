package tools

import (
	"context"
	_ "embed"
	"fmt"
	"path"
	"strings"

	"github.com/agentfleet/agentfleet/execenv"
)

//go:embed read_many_files.md
var readManyFilesDescription string

// ReadManyFilesParams are the arguments of the read_many_files tool.
type ReadManyFilesParams struct {
	Paths []string `json:"paths"`
	// Exclude lists glob patterns of files to skip, matched against the
	// path and against the file name.
	Exclude []string `json:"exclude,omitempty"`
	// LimitPerFile bounds the lines read from each file (DefaultReadLimit when 0).
	LimitPerFile int `json:"limit_per_file,omitempty"`
}

// MaxManyFiles bounds how many files one read_many_files call reads.
const MaxManyFiles = 100

const readManyFilesSchema = `{
  "type": "object",
  "properties": {
    "paths": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1}, "description": "File paths or glob patterns (e.g. \"src/**/*.ts\")."},
    "exclude": {"type": "array", "items": {"type": "string"}, "description": "Glob patterns of files to skip (e.g. \"*_test.go\")."},
    "limit_per_file": {"type": "integer", "minimum": 1, "description": "Maximum lines read from each file (default 2000)."}
  },
  "required": ["paths"],
  "additionalProperties": false
}`

// ReadManyFiles returns the core read_many_files tool.
func ReadManyFiles() Tool {
	return Typed(coreTool("read_many_files", readManyFilesDescription, readManyFilesSchema, false, ArgPaths("paths")), RunReadManyFiles)
}

// RunReadManyFiles reads every file named or matched by p.Paths (at most
// MaxManyFiles), each under a "--- path ---" line. A file that cannot be
// read gets a note in its place; the call fails only when nothing matched.
func RunReadManyFiles(ctx context.Context, call Call, p ReadManyFilesParams) (Output, error) {
	files, notes, err := expandPaths(ctx, call.Env, p.Paths, p.Exclude)
	if err != nil {
		return Output{}, err
	}
	if len(files) == 0 {
		return Output{}, fmt.Errorf("no files matched %s", strings.Join(p.Paths, ", "))
	}
	var out Output
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "--- %s ---\n", f)
		o, err := RunReadFile(ctx, call, ReadFileParams{FilePath: f, Limit: p.LimitPerFile})
		if err != nil {
			fmt.Fprintf(&b, "[not read: %v]\n\n", err)
			continue
		}
		b.WriteString(o.Text + "\n\n")
		out.Images = append(out.Images, o.Images...)
	}
	for _, n := range notes {
		b.WriteString(n + "\n")
	}
	out.Text = strings.TrimRight(b.String(), "\n")
	return out, nil
}

// excluded reports whether f matches one of the patterns, by path or name.
func excluded(f string, patterns []string) bool {
	for _, pat := range patterns {
		if ok, _ := path.Match(pat, f); ok {
			return true
		}
		if ok, _ := path.Match(pat, path.Base(f)); ok {
			return true
		}
	}
	return false
}

// expandPaths resolves glob patterns and removes duplicates, keeping order.
func expandPaths(ctx context.Context, env execenv.Environment, patterns, exclude []string) ([]string, []string, error) {
	var files, notes []string
	seen := map[string]bool{}
	add := func(f string) {
		if !seen[f] && len(files) < MaxManyFiles && !excluded(f, exclude) {
			seen[f] = true
			files = append(files, f)
		}
	}
	for _, pat := range patterns {
		if !strings.ContainsAny(pat, "*?[{") {
			add(pat)
			continue
		}
		res, err := env.Glob(ctx, execenv.GlobRequest{Pattern: pat, Limit: MaxManyFiles})
		if err != nil {
			return nil, nil, fmt.Errorf("pattern %q: %w", pat, err)
		}
		if len(res.Paths) == 0 {
			notes = append(notes, fmt.Sprintf("[no files matched %q]", pat))
		}
		for _, f := range res.Paths {
			add(path.Clean(f))
		}
	}
	if len(seen) == MaxManyFiles {
		notes = append(notes, fmt.Sprintf("[only the first %d files were read; ask for fewer at a time]", MaxManyFiles))
	}
	return files, notes, nil
}
