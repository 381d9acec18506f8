package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

//go:embed list_dir.md
var listDirDescription string

// ListDirParams are the arguments of the list_dir tool.
type ListDirParams struct {
	Path  string `json:"path,omitempty"`
	Depth int    `json:"depth,omitempty"`
}

// DefaultListDepth is how deep list_dir goes when no depth is given.
const DefaultListDepth = 2

const listDirSchema = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory to list; the working directory when omitted."},
    "depth": {"type": "integer", "minimum": 1, "maximum": 10, "description": "How many levels to descend (default 2; 1 lists direct children only)."}
  },
  "additionalProperties": false
}`

// ListDir returns the core list_dir tool.
func ListDir() Tool {
	return Typed(coreTool("list_dir", listDirDescription, listDirSchema, false, ArgPaths("path")), RunListDir)
}

// RunListDir renders a directory tree: directories end in "/", files show
// their size, entries are indented by depth.
func RunListDir(ctx context.Context, call Call, p ListDirParams) (Output, error) {
	dir := p.Path
	if dir == "" {
		dir = call.Env.WorkingDir()
	}
	depth := p.Depth
	if depth <= 0 {
		depth = DefaultListDepth
	}
	info, err := call.Env.Stat(ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return Output{}, fmt.Errorf("%s does not exist", dir)
	}
	if err != nil {
		return Output{}, err
	}
	if !info.IsDir {
		return Output{}, fmt.Errorf("%s is a file, not a directory; use read_file to read it", dir)
	}
	entries, err := call.Env.List(ctx, dir, depth)
	if err != nil {
		return Output{}, err
	}
	var b strings.Builder
	b.WriteString(strings.TrimSuffix(dir, "/") + "/\n")
	if len(entries) == 0 {
		b.WriteString("  (empty)\n")
	}
	for _, e := range entries {
		indent := strings.Repeat("  ", strings.Count(e.Name, "/")+1)
		if e.IsDir {
			fmt.Fprintf(&b, "%s%s/\n", indent, path.Base(e.Name))
		} else {
			fmt.Fprintf(&b, "%s%s (%s)\n", indent, path.Base(e.Name), humanSize(e.Size))
		}
	}
	return Output{Text: strings.TrimRight(b.String(), "\n")}, nil
}

func humanSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
}
