package llm

import (
	"strings"
	"unicode/utf8"
)

// maxExcerpt bounds the length of a body excerpt in an error message.
const maxExcerpt = 300

// BodyExcerpt renders a response body as a short single line for an error
// message: HTML tags are dropped (a proxy's 502 page becomes its text),
// whitespace is collapsed and the result is cut at a few hundred bytes.
func BodyExcerpt(body []byte) string {
	s := string(body)
	if looksLikeHTML(s) {
		s = stripTags(s)
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxExcerpt {
		cut := maxExcerpt
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

func looksLikeHTML(s string) bool {
	head := strings.ToLower(strings.TrimSpace(s[:min(len(s), 512)]))
	return strings.HasPrefix(head, "<!doctype html") || strings.HasPrefix(head, "<html") || strings.Contains(head, "<head") || strings.Contains(head, "<body")
}

// stripTags removes tags and the content of style and script elements.
func stripTags(s string) string {
	var b strings.Builder
	lower := strings.ToLower(s)
	for i := 0; i < len(s); {
		if s[i] != '<' {
			b.WriteByte(s[i])
			i++
			continue
		}
		for _, skip := range []string{"style", "script"} {
			if strings.HasPrefix(lower[i:], "<"+skip) {
				if end := strings.Index(lower[i:], "</"+skip); end >= 0 {
					i += end
				}
			}
		}
		end := strings.IndexByte(s[i:], '>')
		if end < 0 {
			break
		}
		i += end + 1
		b.WriteByte(' ')
	}
	return b.String()
}
