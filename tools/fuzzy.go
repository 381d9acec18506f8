package tools

import (
	"strings"
	"unicode/utf8"

	"github.com/agentfleet/agentfleet/tools/internal/textmatch"
)

// span is a byte range [start, end) of a text.
type span struct{ start, end int }

// normalized is a text with whitespace runs collapsed and Unicode
// punctuation mapped to ASCII, remembering for each of its bytes where in
// the original text it came from.
type normalized struct {
	text  string
	spans []span // one per byte of text
}

// invalidByteBase is the start of the private-use runes that stand for the
// bytes of a text that are not UTF-8 (U+F700 + the byte's value).
const invalidByteBase = 0xF700

// normalize collapses each whitespace run to "\n" when it holds a newline
// and to " " otherwise, and maps punctuation with textmatch.Rune.
func normalize(s string) normalized {
	var b strings.Builder
	var spans []span
	emit := func(r rune, sp span) {
		n := utf8.RuneLen(r)
		if n < 0 {
			r, n = utf8.RuneError, 3
		}
		b.WriteRune(r)
		for range n {
			spans = append(spans, sp)
		}
	}
	runStart, newline := -1, false
	for i, r := range s {
		width := utf8.RuneLen(r)
		if r == utf8.RuneError && !strings.HasPrefix(s[i:], string(utf8.RuneError)) {
			// A byte that is not UTF-8 stands for itself: a private-use rune
			// per byte value, so that it matches only the same byte and its
			// span stays one byte long.
			r, width = invalidByteBase+rune(s[i]), 1
		}
		if textmatch.IsSpace(r) {
			if runStart < 0 {
				runStart, newline = i, false
			}
			newline = newline || r == '\n'
			continue
		}
		if runStart >= 0 {
			emit(spaceToken(newline), span{runStart, i})
			runStart = -1
		}
		emit(textmatch.Rune(r), span{i, i + width})
	}
	if runStart >= 0 {
		emit(spaceToken(newline), span{runStart, len(s)})
	}
	return normalized{text: b.String(), spans: spans}
}

func spaceToken(newline bool) rune {
	if newline {
		return '\n'
	}
	return ' '
}

// fuzzyFind returns the original byte ranges of content where needle occurs
// once whitespace and punctuation are normalized, ignoring whitespace at the
// ends of needle.
func fuzzyFind(content, needle string) []span {
	nc := normalize(content)
	nn := strings.TrimSpace(normalize(needle).text)
	if nn == "" {
		return nil
	}
	var found []span
	for from := 0; from < len(nc.text); {
		i := strings.Index(nc.text[from:], nn)
		if i < 0 {
			break
		}
		i += from
		j := i + len(nn)
		found = append(found, span{nc.spans[i].start, nc.spans[j-1].end})
		from = j
	}
	return found
}
