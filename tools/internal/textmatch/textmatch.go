// Package textmatch holds the tolerant text comparison shared by edit_file
// and apply_patch: Unicode punctuation that models often type in place of
// ASCII (curly quotes, dashes, non-breaking spaces) is mapped to its ASCII
// form so that a near-miss still finds its target.
package textmatch

import "strings"

// Rune maps typographic punctuation and exotic spaces to their ASCII
// equivalents and returns every other rune unchanged.
func Rune(r rune) rune {
	switch r {
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
		return '-'
	case '\u2018', '\u2019', '\u201A', '\u201B':
		return '\''
	case '\u201C', '\u201D', '\u201E', '\u201F':
		return '"'
	case '\u00A0', '\u2002', '\u2003', '\u2004', '\u2005', '\u2006', '\u2007',
		'\u2008', '\u2009', '\u200A', '\u202F', '\u205F', '\u3000':
		return ' '
	}
	return r
}

// Punct returns s trimmed at both ends with its punctuation mapped by Rune.
func Punct(s string) string {
	return strings.Map(Rune, strings.TrimSpace(s))
}

// IsSpace reports whether r is whitespace after mapping by Rune.
func IsSpace(r rune) bool {
	switch Rune(r) {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}
