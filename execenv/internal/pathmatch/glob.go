package pathmatch

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// CompileGlob turns a slash-separated glob into an anchored regular
// expression: '*' and '?' stay within one path segment, "[...]" is a
// character class ("[!...]" negated), '\' escapes, and a whole segment "**"
// matches any number of segments (zero or more when followed by '/').
func CompileGlob(pattern string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	segs := strings.Split(pattern, "/")
	for i, seg := range segs {
		last := i == len(segs)-1
		if seg == "**" {
			if last {
				b.WriteString(".*")
			} else {
				b.WriteString("(?:.*/)?")
			}
			continue
		}
		if err := writeSegment(&b, seg); err != nil {
			return nil, fmt.Errorf("glob %q: %w", pattern, err)
		}
		if !last {
			b.WriteString("/")
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// writeSegment writes the expression for one segment.
func writeSegment(b *strings.Builder, seg string) error {
	for i := 0; i < len(seg); i++ {
		switch c := seg[i]; c {
		case '*':
			for i+1 < len(seg) && seg[i+1] == '*' {
				i++
			}
			b.WriteString("[^/]*")
		case '?':
			b.WriteString("[^/]")
		case '[':
			end, class, err := charClass(seg, i)
			if err != nil {
				return err
			}
			b.WriteString(class)
			i = end
		case '\\':
			if i+1 < len(seg) {
				i++
			}
			b.WriteString(regexp.QuoteMeta(seg[i : i+1]))
		default:
			// Byte by byte: the bytes of a multi-byte rune go out in order.
			b.WriteString(regexp.QuoteMeta(seg[i : i+1]))
		}
	}
	return nil
}

// charClass converts the class starting at seg[start] ('['); it returns the
// index of the closing ']'.
func charClass(seg string, start int) (int, string, error) {
	var b strings.Builder
	b.WriteString("[")
	i := start + 1
	if i < len(seg) && (seg[i] == '!' || seg[i] == '^') {
		b.WriteString("^/")
		i++
	}
	first := true
	for ; i < len(seg); i++ {
		c := seg[i]
		if c == ']' && !first {
			b.WriteString("]")
			return i, b.String(), nil
		}
		first = false
		switch {
		case c == '\\' && i+1 < len(seg):
			i++
			b.WriteString(regexp.QuoteMeta(seg[i : i+1]))
		case c == '-':
			b.WriteByte('-')
		case c == ']' || c == '[' || c == '^':
			b.WriteString(`\` + string(c))
		default:
			r, size := utf8.DecodeRuneInString(seg[i:])
			b.WriteString(regexp.QuoteMeta(string(r)))
			i += size - 1
		}
	}
	return 0, "", fmt.Errorf("unterminated character class at offset %d", start)
}

// HasGlobMeta reports whether a segment needs matching rather than a literal compare.
func HasGlobMeta(seg string) bool { return strings.ContainsAny(seg, `*?[\`) }
