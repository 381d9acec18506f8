package patch

import (
	"strings"

	"github.com/agentfleet/agentfleet/tools/internal/textmatch"
)

// A matcher compares a file line with a patch line at one level of tolerance.
type matcher func(fileLine, patchLine string) bool

// matchers are tried in order; the first that finds the lines wins.
var matchers = []matcher{
	func(a, b string) bool { return a == b },
	func(a, b string) bool { return strings.TrimRight(a, " \t\r\v\f") == strings.TrimRight(b, " \t\r\v\f") },
	func(a, b string) bool { return strings.TrimSpace(a) == strings.TrimSpace(b) },
	func(a, b string) bool { return textmatch.Punct(a) == textmatch.Punct(b) },
}

// seek finds pattern in lines at or after start and returns its index and
// the matcher that found it, or -1. With eof the pattern must end the file.
func seek(lines, pattern []string, start int, eof bool) (int, matcher) {
	if len(pattern) == 0 {
		return start, matchers[0]
	}
	if len(pattern) > len(lines) {
		return -1, nil
	}
	if eof {
		start = len(lines) - len(pattern)
	}
	for _, m := range matchers {
		if i := seekWith(lines, pattern, start, m); i >= 0 {
			return i, m
		}
	}
	return -1, nil
}

func seekWith(lines, pattern []string, start int, m matcher) int {
	for i := max(start, 0); i+len(pattern) <= len(lines); i++ {
		if matchAt(lines, pattern, i, m) {
			return i
		}
	}
	return -1
}

func matchAt(lines, pattern []string, i int, m matcher) bool {
	for j, p := range pattern {
		if !m(lines[i+j], p) {
			return false
		}
	}
	return true
}

// occurrences returns the 1-based line numbers where pattern matches with m
// at or after start.
func occurrences(lines, pattern []string, start int, m matcher) []int {
	var at []int
	for i := max(start, 0); i+len(pattern) <= len(lines); i++ {
		if matchAt(lines, pattern, i, m) {
			at = append(at, i+1)
		}
	}
	return at
}
