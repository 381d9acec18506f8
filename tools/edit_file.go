package tools

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

//go:embed edit_file.md
var editFileDescription string

// EditFileParams are the arguments of the edit_file tool.
type EditFileParams struct {
	FilePath   string `json:"file_path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

const editFileSchema = `{
  "type": "object",
  "properties": {
    "file_path": {"type": "string", "minLength": 1, "description": "Path of the file, absolute or relative to the working directory."},
    "old_string": {"type": "string", "description": "The exact text to replace."},
    "new_string": {"type": "string", "description": "The text to put in its place."},
    "replace_all": {"type": "boolean", "description": "Replace every occurrence instead of exactly one (default false)."}
  },
  "required": ["file_path", "old_string", "new_string"],
  "additionalProperties": false
}`

// EditFile returns the core edit_file tool.
func EditFile() Tool {
	return Typed(coreTool("edit_file", editFileDescription, editFileSchema, true, ArgPaths("file_path")), RunEditFile)
}

// RunEditFile replaces old_string with new_string in a file: exactly first,
// then tolerating differences in whitespace and Unicode punctuation (and
// saying so in the result). Without replace_all the text must occur once.
// An empty old_string creates a missing or empty file. With call.Reads
// set, an edit of a file that changed since the session last read it is
// refused (ErrStale); a file never read may be edited, since old_string
// must match what it contains now.
func RunEditFile(ctx context.Context, call Call, p EditFileParams) (Output, error) {
	if p.OldString == p.NewString {
		return Output{}, errors.New("old_string and new_string are identical, so the edit would change nothing")
	}
	data, err := call.Env.ReadFile(ctx, p.FilePath)
	missing := errors.Is(err, fs.ErrNotExist)
	if err != nil && !missing {
		return Output{}, err
	}
	if p.OldString == "" {
		return createByEdit(ctx, call, p, missing, len(data))
	}
	if missing {
		return Output{}, fmt.Errorf("%s does not exist; check the path, or pass an empty old_string to create it", p.FilePath)
	}
	if err := call.Reads.checkFresh(ctx, call.Env, p.FilePath, data, false); err != nil {
		return Output{}, err
	}
	updated, n, fuzzy, err := replaceText(string(data), p)
	if err != nil {
		return Output{}, fmt.Errorf("%s: %w", p.FilePath, err)
	}
	if err := call.Env.WriteFile(ctx, p.FilePath, []byte(updated)); err != nil {
		return Output{}, fmt.Errorf("could not write %s: %w", p.FilePath, err)
	}
	call.Reads.noteWritten(ctx, call.Env, p.FilePath, []byte(updated))
	text := fmt.Sprintf("Edited %s: replaced %d %s.", p.FilePath, n, plural(n, "occurrence", "occurrences"))
	if fuzzy {
		text += " Note: old_string did not match exactly; it matched once differences in whitespace and Unicode punctuation (quotes, dashes, special spaces) were ignored. Read the changed lines to check the result."
	}
	return Output{Text: text}, nil
}

func createByEdit(ctx context.Context, call Call, p EditFileParams, missing bool, size int) (Output, error) {
	if !missing && size > 0 {
		return Output{}, fmt.Errorf("old_string is empty but %s already has content; give the text to replace (or use write_file to replace the whole file)", p.FilePath)
	}
	if err := call.Env.WriteFile(ctx, p.FilePath, []byte(p.NewString)); err != nil {
		return Output{}, fmt.Errorf("could not write %s: %w", p.FilePath, err)
	}
	call.Reads.noteWritten(ctx, call.Env, p.FilePath, []byte(p.NewString))
	return Output{Text: fmt.Sprintf("Created %s (%d bytes).", p.FilePath, len(p.NewString))}, nil
}

// replaceText performs the edit on content and returns the new content, the
// number of replacements and whether tolerant matching was needed.
func replaceText(content string, p EditFileParams) (string, int, bool, error) {
	old, repl := p.OldString, p.NewString
	if isCRLF(content) && !strings.Contains(old, "\r\n") {
		old = strings.ReplaceAll(old, "\n", "\r\n")
		repl = strings.ReplaceAll(repl, "\n", "\r\n")
	}
	if n := strings.Count(content, old); n > 0 {
		if n > 1 && !p.ReplaceAll {
			return "", 0, false, notUnique(content, n, indexAll(content, old))
		}
		return strings.ReplaceAll(content, old, repl), n, false, nil
	}
	found := fuzzyFind(content, old)
	if len(found) == 0 {
		return "", 0, false, errors.New("old_string was not found, not even when ignoring differences in whitespace and punctuation; read the file again and copy the text exactly (without line numbers)")
	}
	if len(found) > 1 && !p.ReplaceAll {
		starts := make([]int, len(found))
		for i, f := range found {
			starts[i] = f.start
		}
		return "", 0, true, notUnique(content, len(found), starts)
	}
	repl = trimLike(repl, old)
	var b strings.Builder
	last := 0
	for _, f := range found {
		b.WriteString(content[last:f.start])
		b.WriteString(repl)
		last = f.end
	}
	b.WriteString(content[last:])
	return b.String(), len(found), true, nil
}

// trimLike removes from repl the leading and trailing whitespace that old
// has, since a tolerant match leaves the file's own surrounding whitespace
// in place.
func trimLike(repl, old string) string {
	lead := old[:len(old)-len(strings.TrimLeft(old, " \t\r\n"))]
	trail := old[len(strings.TrimRight(old, " \t\r\n")):]
	repl = strings.TrimPrefix(repl, lead)
	return strings.TrimSuffix(repl, trail)
}

func notUnique(content string, n int, starts []int) error {
	lines := make([]int, 0, min(len(starts), 10))
	for _, s := range starts[:min(len(starts), 10)] {
		lines = append(lines, strings.Count(content[:s], "\n")+1)
	}
	return fmt.Errorf("old_string occurs %d times (at lines %s); include more surrounding lines in old_string so it matches exactly one place, or set replace_all to change every occurrence",
		n, strings.Trim(strings.Join(strings.Fields(fmt.Sprint(lines)), ", "), "[]"))
}

func indexAll(s, sub string) []int {
	var at []int
	for from := 0; ; {
		i := strings.Index(s[from:], sub)
		if i < 0 {
			return at
		}
		at = append(at, from+i)
		from += i + len(sub)
	}
}

// isCRLF reports whether every line break of s is CRLF (and there is one).
func isCRLF(s string) bool {
	n := strings.Count(s, "\r\n")
	return n > 0 && n == strings.Count(s, "\n")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
