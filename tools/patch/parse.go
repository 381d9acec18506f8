package patch

import (
	"fmt"
	"regexp"
	"strings"
)

// Op is the kind of a file operation.
type Op string

const (
	OpAdd    Op = "add"
	OpDelete Op = "delete"
	OpUpdate Op = "update"
)

// Patch is a parsed patch: file operations in the order they appear.
type Patch struct {
	Files []FileOp
}

// FileOp is one file operation.
type FileOp struct {
	Op   Op
	Path string
	// MoveTo is the new path of an update that renames the file.
	MoveTo string
	// Contents is the whole file an add creates (always newline-terminated).
	Contents string
	// Chunks are the hunks of an update, in order.
	Chunks []Chunk
	// Line is the 1-based line of the operation's header in the patch.
	Line int
}

// Chunk is one @@ hunk of an update.
type Chunk struct {
	// Hint is the text after "@@ ": a line that precedes the hunk ("" for none).
	Hint string
	// Old are the lines the hunk expects (context and removed lines).
	Old []string
	// New are the lines that replace them (context and added lines).
	New []string
	// EOF anchors the hunk at the end of the file.
	EOF bool
}

// ParseError says where and why a patch does not parse.
type ParseError struct {
	Line    int // 1-based line in the patch, 0 when not tied to a line
	Message string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("invalid patch: line %d: %s", e.Line, e.Message)
	}
	return "invalid patch: " + e.Message
}

const (
	beginMarker  = "*** Begin Patch"
	endMarker    = "*** End Patch"
	addPrefix    = "*** Add File:"
	deletePrefix = "*** Delete File:"
	updatePrefix = "*** Update File:"
	movePrefix   = "*** Move to:"
	eofMarker    = "*** End of File"
)

// Parse parses a v4a patch. It reads only the text.
func Parse(text string) (*Patch, error) {
	lines, first, err := body(text)
	if err != nil {
		return nil, err
	}
	p := &Patch{}
	for i := 0; i < len(lines); {
		if strings.TrimSpace(lines[i]) == "" {
			i++
			continue
		}
		op, n, err := parseFileOp(lines[i:], first+i)
		if err != nil {
			return nil, err
		}
		p.Files = append(p.Files, op)
		i += n
	}
	return p, nil
}

// body splits the patch into lines and returns those between the begin and
// end markers, with the 1-based patch line number of the first of them.
func body(text string) ([]string, int, error) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	offset := 0
	if len(lines) >= 4 && isHeredocStart(lines[0]) && strings.HasSuffix(strings.TrimSpace(lines[len(lines)-1]), "EOF") {
		lines = lines[1 : len(lines)-1]
		offset = 1
	}
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != beginMarker {
		return nil, 0, &ParseError{Line: 1 + offset, Message: fmt.Sprintf("the first line of the patch must be %q", beginMarker)}
	}
	if len(lines) < 2 || strings.TrimSpace(lines[len(lines)-1]) != endMarker {
		return nil, 0, &ParseError{Line: len(lines) + offset, Message: fmt.Sprintf("the last line of the patch must be %q", endMarker)}
	}
	return lines[1 : len(lines)-1], 2 + offset, nil
}

// isHeredocStart accepts <<EOF, <<'EOF' and <<"EOF", optionally preceded by
// the command name, as a shell would have wrapped the patch.
func isHeredocStart(line string) bool {
	l := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "apply_patch"))
	return l == "<<EOF" || l == "<<'EOF'" || l == `<<"EOF"`
}

// parseFileOp parses one operation at the start of lines and returns how
// many lines it used. lineNo is the patch line number of lines[0].
func parseFileOp(lines []string, lineNo int) (FileOp, int, error) {
	header := strings.TrimSpace(lines[0])
	switch {
	case strings.HasPrefix(header, addPrefix):
		return parseAdd(lines, lineNo, strings.TrimSpace(header[len(addPrefix):]))
	case strings.HasPrefix(header, deletePrefix):
		op := FileOp{Op: OpDelete, Path: strings.TrimSpace(header[len(deletePrefix):]), Line: lineNo}
		return op, 1, checkPath(op.Path, lineNo)
	case strings.HasPrefix(header, updatePrefix):
		return parseUpdate(lines, lineNo, strings.TrimSpace(header[len(updatePrefix):]))
	}
	return FileOp{}, 0, &ParseError{Line: lineNo, Message: fmt.Sprintf(
		"%q is not a valid file operation header; use %q, %q or %q",
		header, addPrefix+" path", deletePrefix+" path", updatePrefix+" path")}
}

func checkPath(path string, lineNo int) error {
	if path == "" {
		return &ParseError{Line: lineNo, Message: "the file operation names no path"}
	}
	return nil
}

func parseAdd(lines []string, lineNo int, path string) (FileOp, int, error) {
	op := FileOp{Op: OpAdd, Path: path, Line: lineNo}
	var b strings.Builder
	n := 1
	for ; n < len(lines) && strings.HasPrefix(lines[n], "+"); n++ {
		b.WriteString(lines[n][1:])
		b.WriteByte('\n')
	}
	op.Contents = b.String()
	return op, n, checkPath(path, lineNo)
}

func parseUpdate(lines []string, lineNo int, path string) (FileOp, int, error) {
	op := FileOp{Op: OpUpdate, Path: path, Line: lineNo}
	if err := checkPath(path, lineNo); err != nil {
		return op, 0, err
	}
	n := 1
	if n < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[n]), movePrefix) {
		op.MoveTo = strings.TrimSpace(strings.TrimSpace(lines[n])[len(movePrefix):])
		if err := checkPath(op.MoveTo, lineNo+n); err != nil {
			return op, 0, err
		}
		n++
	}
	for n < len(lines) {
		if strings.TrimSpace(lines[n]) == "" {
			n++
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(lines[n]), "***") {
			break
		}
		chunk, used, err := parseChunk(lines[n:], lineNo+n, len(op.Chunks) == 0)
		if err != nil {
			return op, 0, err
		}
		op.Chunks = append(op.Chunks, chunk)
		n += used
	}
	if len(op.Chunks) == 0 {
		return op, 0, &ParseError{Line: lineNo, Message: fmt.Sprintf(
			"the update of %q has no hunks; add a hunk (@@ followed by context, - and + lines) or remove the operation", path)}
	}
	return op, n, nil
}

// unifiedRange matches a unified-diff range header ("-12,3 +12,4 @@") that
// models sometimes put after @@; it carries no usable context.
var unifiedRange = regexp.MustCompile(`^-\d+(,\d+)? \+\d+(,\d+)? @@`)

// parseChunk parses one hunk. The first hunk of a file may omit its @@ line.
func parseChunk(lines []string, lineNo int, allowNoMarker bool) (Chunk, int, error) {
	var c Chunk
	start := 0
	switch first := strings.TrimRight(lines[0], " \t"); {
	case first == "@@":
		start = 1
	case strings.HasPrefix(first, "@@ "):
		hint := strings.TrimSpace(first[3:])
		if unifiedRange.MatchString(hint) {
			hint = strings.TrimSpace(unifiedRange.ReplaceAllString(hint, ""))
		}
		c.Hint = strings.TrimSpace(strings.TrimSuffix(hint, "@@"))
		start = 1
	case !allowNoMarker:
		return c, 0, &ParseError{Line: lineNo, Message: fmt.Sprintf("expected a hunk starting with @@, got %q", lines[0])}
	}
	if start >= len(lines) {
		return c, 0, &ParseError{Line: lineNo, Message: "the hunk has no lines"}
	}
	n := 0
	for _, line := range lines[start:] {
		if strings.TrimSpace(line) == eofMarker {
			if n == 0 {
				return c, 0, &ParseError{Line: lineNo + start, Message: "the hunk has no lines"}
			}
			c.EOF = true
			n++
			break
		}
		if !addChunkLine(&c, line) {
			if n == 0 {
				return c, 0, &ParseError{Line: lineNo + start, Message: fmt.Sprintf(
					"unexpected line %q in a hunk; every hunk line starts with ' ' (context), '-' (removed) or '+' (added)", line)}
			}
			break
		}
		n++
	}
	return c, n + start, nil
}

// addChunkLine adds one hunk line to c and reports whether it was one.
func addChunkLine(c *Chunk, line string) bool {
	if line == "" { // an empty context line whose leading space was lost
		c.Old = append(c.Old, "")
		c.New = append(c.New, "")
		return true
	}
	switch line[0] {
	case ' ':
		c.Old = append(c.Old, line[1:])
		c.New = append(c.New, line[1:])
	case '-':
		c.Old = append(c.Old, line[1:])
	case '+':
		c.New = append(c.New, line[1:])
	default:
		return false
	}
	return true
}
