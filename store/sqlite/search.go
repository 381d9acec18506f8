package sqlite

import (
	"strings"

	"github.com/agentfleet/agentfleet/store"
)

// ftsMatch renders q as an FTS5 MATCH expression: every phrase quoted (so
// no user text is FTS5 syntax), alternatives joined by OR, exclusions by
// NOT after them.
func ftsMatch(q store.SearchQuery) string {
	quote := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
	alts := make([]string, len(q.Any))
	for i, all := range q.Any {
		ph := make([]string, len(all))
		for j, p := range all {
			ph[j] = quote(p)
		}
		alts[i] = strings.Join(ph, " AND ")
	}
	var expr strings.Builder
	expr.WriteString("(" + strings.Join(alts, " OR ") + ")")
	for _, n := range q.None {
		expr.WriteString(" NOT " + quote(n))
	}
	return expr.String()
}
