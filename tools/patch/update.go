package patch

import (
	"fmt"
	"slices"
	"strings"
)

// HunkError says why a hunk of an update could not be placed.
type HunkError struct {
	Hunk    int // 1-based index of the hunk within its file
	Message string
}

func (e *HunkError) Error() string { return fmt.Sprintf("hunk %d: %s", e.Hunk, e.Message) }

type replacement struct {
	at, n int
	lines []string
}

// Update applies the hunks of one update to content and returns the new
// content. It is pure. The result ends with a newline; content whose lines
// all end in CRLF keeps CRLF.
func Update(content string, chunks []Chunk) (string, error) {
	crlf := strings.Count(content, "\r\n") > 0 && strings.Count(content, "\r\n") == strings.Count(content, "\n")
	if crlf {
		content = strings.ReplaceAll(content, "\r\n", "\n")
	}
	lines := strings.Split(content, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	reps, err := place(lines, chunks)
	if err != nil {
		return "", err
	}
	for _, r := range slices.Backward(reps) {
		lines = slices.Replace(lines, r.at, r.at+r.n, r.lines...)
	}
	out := strings.Join(lines, "\n")
	if len(lines) > 0 {
		out += "\n"
	}
	if crlf {
		out = strings.ReplaceAll(out, "\n", "\r\n")
	}
	return out, nil
}

// place finds where each hunk applies, in order, and returns the
// replacements sorted by position.
func place(lines []string, chunks []Chunk) ([]replacement, error) {
	var reps []replacement
	cursor := 0
	for i, c := range chunks {
		if c.Hint != "" {
			at, _ := seek(lines, []string{c.Hint}, cursor, false)
			if at < 0 {
				return nil, &HunkError{Hunk: i + 1, Message: fmt.Sprintf(
					"could not find the @@ line %q (searched from line %d); it must match a line of the file exactly or up to whitespace", c.Hint, cursor+1)}
			}
			cursor = at + 1
		}
		if len(c.Old) == 0 { // pure addition: append, before a final blank line if any
			at := len(lines)
			if at > 0 && lines[at-1] == "" {
				at--
			}
			reps = append(reps, replacement{at: at, lines: c.New})
			continue
		}
		old, repl := c.Old, c.New
		at, m := seek(lines, old, cursor, c.EOF)
		if at < 0 && old[len(old)-1] == "" { // the trailing empty line may stand for the final newline
			old = old[:len(old)-1]
			if len(repl) > 0 && repl[len(repl)-1] == "" {
				repl = repl[:len(repl)-1]
			}
			at, m = seek(lines, old, cursor, c.EOF)
		}
		if at < 0 {
			return nil, &HunkError{Hunk: i + 1, Message: fmt.Sprintf(
				"could not find the expected lines (searched from line %d; read the file again, its content may differ from what you expect):\n%s",
				cursor+1, strings.Join(c.Old, "\n"))}
		}
		if c.Hint == "" && !c.EOF {
			if err := checkUnique(lines, old, cursor, m, chunks[i:], i+1); err != nil {
				return nil, err
			}
		}
		reps = append(reps, replacement{at: at, n: len(old), lines: repl})
		cursor = at + len(old)
	}
	slices.SortStableFunc(reps, func(a, b replacement) int { return a.at - b.at })
	return reps, nil
}

// checkUnique refuses a hunk whose lines occur more often from the cursor on
// than there are hunks (this one and later ones) expecting the same lines.
func checkUnique(lines, old []string, cursor int, m matcher, rest []Chunk, hunk int) error {
	at := occurrences(lines, old, cursor, m)
	same := 0
	for _, c := range rest {
		if slices.Equal(c.Old, rest[0].Old) {
			same++
		}
	}
	if len(at) <= same {
		return nil
	}
	shown := at
	if len(shown) > 10 {
		shown = shown[:10]
	}
	return &HunkError{Hunk: hunk, Message: fmt.Sprintf(
		"the expected lines occur %d times (at lines %s), so the place to change is ambiguous; add more unchanged context lines around the change, or an @@ line naming the enclosing function or class:\n%s",
		len(at), joinInts(shown), strings.Join(old, "\n"))}
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
