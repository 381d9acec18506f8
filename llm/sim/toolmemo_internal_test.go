package sim

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestToolMemoScansEachArrayOnce(t *testing.T) {
	scans := 0
	m := &toolMemo{scan: func(raw json.RawMessage, c *Constraints) {
		scans++
		anthropicProviderTools(raw, c)
	}}
	withSearch := json.RawMessage(`[{"name":"shell","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search"}]`)
	plain := json.RawMessage(`[{"name":"shell","input_schema":{"type":"object"}}]`)
	for range 3 {
		var c Constraints
		m.apply(withSearch, &c)
		if !slices.Equal(c.ProviderTools, []string{"web_search_20250305"}) {
			t.Fatalf("provider tools %v, want [web_search_20250305]", c.ProviderTools)
		}
		c.ProviderTools[0] = "changed" // a caller's change must not reach the memo
	}
	var c Constraints
	m.apply(plain, &c)
	if c.ProviderTools != nil {
		t.Fatalf("provider tools of a plain array %v, want none", c.ProviderTools)
	}
	if scans != 2 {
		t.Fatalf("%d scans for two distinct arrays, want 2", scans)
	}
}
