package sim

import (
	"encoding/json"
	"slices"
	"sync"
)

// maxToolMemo bounds the distinct tools arrays a toolMemo remembers; past
// it the memo starts over.
const maxToolMemo = 64

// toolMemo remembers what a dialect's provider-tool scan found in a
// request's tools array. An agent sends the same array (every tool with
// its whole input schema) on every request of a session, and sessions of
// one profile share it, so decoding it each time was most of what the
// server spent reading a request's constraints. The scan must only append
// to Constraints.ProviderTools.
type toolMemo struct {
	scan func(json.RawMessage, *Constraints)
	mu   sync.Mutex
	seen map[string][]string // tools array -> provider tool types found
}

// apply adds the provider tools of raw to c, scanning raw only the first
// time it is seen.
func (m *toolMemo) apply(raw json.RawMessage, c *Constraints) {
	m.mu.Lock()
	types, ok := m.seen[string(raw)]
	m.mu.Unlock()
	if !ok {
		var found Constraints
		m.scan(raw, &found)
		types = found.ProviderTools
		m.mu.Lock()
		if m.seen == nil || len(m.seen) >= maxToolMemo {
			m.seen = map[string][]string{}
		}
		m.seen[string(raw)] = types
		m.mu.Unlock()
	}
	c.ProviderTools = append(c.ProviderTools, slices.Clone(types)...)
}

var (
	anthropicToolMemo = &toolMemo{scan: anthropicProviderTools}
	geminiToolMemo    = &toolMemo{scan: geminiProviderTools}
)
