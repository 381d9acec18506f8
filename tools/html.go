package tools

import (
	"html"
	"regexp"
	"strings"
)

var (
	htmlDropped  = regexp.MustCompile(`(?is)<(script|style|noscript|template|svg|head)\b.*?</(script|style|noscript|template|svg|head)\s*>|<!--.*?-->`)
	htmlBreaks   = regexp.MustCompile(`(?i)<(br|/?p|/?div|/?li|/?ul|/?ol|/?tr|/?table|/?h[1-6]|/?section|/?article|/?header|/?footer|/?pre|/?blockquote|hr)\b[^>]*>`)
	htmlTags     = regexp.MustCompile(`(?s)<[^>]*>`)
	htmlSpaces   = regexp.MustCompile(`[ \t\f\v\r]+`)
	htmlNewlines = regexp.MustCompile(`\n\s*\n+`)
)

// HTMLToText reduces an HTML document to readable text: scripts, styles and
// comments dropped, block elements as line breaks, entities decoded and
// whitespace collapsed.
func HTMLToText(doc string) string {
	s := htmlDropped.ReplaceAllString(doc, " ")
	s = htmlBreaks.ReplaceAllString(s, "\n")
	s = htmlTags.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	s = strings.ReplaceAll(s, "\u00a0", " ")
	s = htmlSpaces.ReplaceAllString(s, " ")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	s = htmlNewlines.ReplaceAllString(strings.Join(lines, "\n"), "\n\n")
	return strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
}
