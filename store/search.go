package store

import (
	"strings"
	"unicode"
)

// SearchQuery is a text search parsed from ListTasksParams.Query, in the
// web-search syntax Postgres's websearch_to_tsquery reads: Any is a list
// of alternatives (words joined by "or"), each a list of phrases that must
// all match; None lists phrases that must not match. A phrase is one
// quoted string or one bare word.
type SearchQuery struct {
	Any  [][]string
	None []string
}

// ParseQuery parses q. A query of excluded words only is an error: a
// search names something to find.
func ParseQuery(q string) (SearchQuery, error) {
	var sq SearchQuery
	cur := []string{}
	for _, tok := range searchTokens(q) {
		switch {
		case !strings.ContainsFunc(tok.text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }):
			// Punctuation alone is no word; both engines drop it.
		case tok.not:
			sq.None = append(sq.None, tok.text)
		case !tok.quoted && strings.EqualFold(tok.text, "or"):
			if len(cur) > 0 {
				sq.Any = append(sq.Any, cur)
				cur = []string{}
			}
		default:
			cur = append(cur, tok.text)
		}
	}
	if len(cur) > 0 {
		sq.Any = append(sq.Any, cur)
	}
	if len(sq.Any) == 0 {
		return sq, invalidf("Query", "%q names nothing to find: give a word or a \"phrase\" (-word only excludes)", q)
	}
	return sq, nil
}

type searchToken struct {
	text        string
	not, quoted bool
}

// searchTokens splits q into bare words and quoted phrases, each maybe
// negated by a leading '-'. An unclosed quote runs to the end.
func searchTokens(q string) []searchToken {
	var out []searchToken
	for q = strings.TrimSpace(q); q != ""; q = strings.TrimSpace(q) {
		var t searchToken
		if q[0] == '-' {
			t.not, q = true, q[1:]
		}
		if q != "" && q[0] == '"' {
			end := strings.IndexByte(q[1:], '"')
			if end < 0 {
				end = len(q) - 1
			}
			t.text, t.quoted, q = strings.TrimSpace(q[1:1+end]), true, q[min(len(q), end+2):]
		} else {
			end := strings.IndexAny(q, " \t\n\r")
			if end < 0 {
				end = len(q)
			}
			t.text, q = q[:end], q[end:]
		}
		out = append(out, t)
	}
	return out
}
