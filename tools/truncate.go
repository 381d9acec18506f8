package tools

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// defaultLimits are the per-tool defaults. Tools not listed get
// fallbackLimits.
var defaultLimits = map[string]Limits{
	"read_file":       {MaxChars: 50_000, Mode: HeadTail},
	"read_many_files": {MaxChars: 50_000, Mode: HeadTail},
	"shell":           {MaxChars: 30_000, MaxLines: 256, Mode: HeadTail},
	"grep":            {MaxChars: 20_000, MaxLines: 200, Mode: Tail},
	"glob":            {MaxChars: 20_000, MaxLines: 500, Mode: Tail},
	"list_dir":        {MaxChars: 20_000, MaxLines: 500, Mode: HeadTail},
	"edit_file":       {MaxChars: 10_000, Mode: Tail},
	"apply_patch":     {MaxChars: 10_000, Mode: Tail},
	"write_file":      {MaxChars: 1_000, Mode: Tail},
	"spawn_agent":     {MaxChars: 20_000, Mode: HeadTail},
	"web_fetch":       {MaxChars: 50_000, Mode: HeadTail},
}

// fallbackLimits bound tools without a default of their own (custom tools).
var fallbackLimits = Limits{MaxChars: 30_000, Mode: HeadTail}

// DefaultLimits returns the default truncation limits for a tool name.
// MaxLines is negative when the tool has no line limit.
func DefaultLimits(name string) Limits {
	l, ok := defaultLimits[name]
	if !ok {
		l = fallbackLimits
	}
	if l.MaxLines == 0 {
		l.MaxLines = -1
	}
	return l
}

// Merge returns l with every zero field taken from base.
func (l Limits) Merge(base Limits) Limits {
	if l.MaxChars == 0 {
		l.MaxChars = base.MaxChars
	}
	if l.MaxLines == 0 {
		l.MaxLines = base.MaxLines
	}
	if l.Mode == "" {
		l.Mode = base.Mode
	}
	return l
}

// Truncate applies l to output: characters first,
// then lines. It reports whether anything was cut. Characters are counted
// as runes and cuts fall on rune boundaries.
func Truncate(output string, l Limits) (string, bool) {
	out, cut := output, false
	if l.MaxChars > 0 && utf8.RuneCountInString(out) > l.MaxChars {
		out, cut = TruncateChars(out, l.MaxChars, l.Mode), true
	}
	if l.MaxLines > 0 && strings.Count(out, "\n")+1 > l.MaxLines {
		out, cut = TruncateLines(out, l.MaxLines), true
	}
	return out, cut
}

// TruncateChars keeps at most maxChars characters of s: the first and last
// halves (HeadTail, the default) or the last maxChars (Tail), with the
// a warning marker naming how many characters were removed.
func TruncateChars(s string, maxChars int, mode TruncationMode) string {
	n := utf8.RuneCountInString(s)
	if maxChars <= 0 || n <= maxChars {
		return s
	}
	removed := strconv.Itoa(n - maxChars)
	if mode == Tail {
		return "[WARNING: Tool output was truncated. First " + removed + " characters were removed. " +
			"The full output is available in the event stream.]\n\n" + s[runeOffset(s, n-maxChars):]
	}
	half := maxChars / 2
	return s[:runeOffset(s, half)] +
		"\n\n[WARNING: Tool output was truncated. " + removed + " characters were removed from the middle. " +
		"The full output is available in the event stream. " +
		"If you need to see specific parts, re-run the tool with more targeted parameters.]\n\n" +
		s[runeOffset(s, n-half):]
}

// runeOffset returns the byte offset of the rune with index i in s.
func runeOffset(s string, i int) int {
	if i <= 0 {
		return 0
	}
	for off := range s {
		if i == 0 {
			return off
		}
		i--
	}
	return len(s)
}

// TruncateLines keeps the first and last halves of s's lines when it has
// more than maxLines, with a marker counting the omitted lines.
func TruncateLines(s string, maxLines int) string {
	if maxLines <= 0 || strings.Count(s, "\n")+1 <= maxLines {
		return s
	}
	lines := strings.Split(s, "\n")
	head := maxLines / 2
	tail := maxLines - head
	omitted := len(lines) - head - tail
	return strings.Join(lines[:head], "\n") +
		"\n[... " + strconv.Itoa(omitted) + " lines omitted ...]\n" +
		strings.Join(lines[len(lines)-tail:], "\n")
}
