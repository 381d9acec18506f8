package profiles

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/agentfleet/agentfleet/execenv"
)

// ProjectDocBudget bounds the project instructions in the prompt (bytes).
const ProjectDocBudget = 32 * 1024

// ProjectDocMarker ends project instructions cut at the budget.
const ProjectDocMarker = "[Project instructions truncated at 32KB]"

// ProjectDoc is one instruction file found in the project.
type ProjectDoc struct {
	Path    string // relative to the root it was found from
	Content string
}

// DiscoverDocs finds the instruction files named in names, walking from
// root down to dir: root-level files first, deeper files later (they take
// precedence). At each level the names are tried in order. The total
// content is cut at ProjectDocBudget, the last document ending with
// ProjectDocMarker.
func DiscoverDocs(ctx context.Context, env execenv.Environment, root, dir string, names []string) ([]ProjectDoc, error) {
	var docs []ProjectDoc
	used := 0
	for _, level := range levels(root, dir) {
		for _, name := range names {
			p := filepath.Join(level, name)
			b, err := env.ReadFile(ctx, p)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return docs, err
			}
			rel, _ := filepath.Rel(root, p)
			content := string(b)
			if used+len(content) > ProjectDocBudget {
				content = cutUTF8(content, ProjectDocBudget-used) + "\n" + ProjectDocMarker
				return append(docs, ProjectDoc{Path: filepath.ToSlash(rel), Content: content}), nil
			}
			used += len(content)
			docs = append(docs, ProjectDoc{Path: filepath.ToSlash(rel), Content: content})
		}
	}
	return docs, nil
}

// levels lists root, then each directory down to dir. When dir is not
// inside root only dir is searched.
func levels(root, dir string) []string {
	root, dir = filepath.Clean(root), filepath.Clean(dir)
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return []string{dir}
	}
	out := []string{root}
	if rel == "." {
		return out
	}
	cur := root
	for part := range strings.SplitSeq(filepath.ToSlash(rel), "/") {
		cur = filepath.Join(cur, part)
		out = append(out, cur)
	}
	return out
}

// cutUTF8 returns at most n bytes of s without splitting a character.
func cutUTF8(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
