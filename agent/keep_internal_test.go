package agent

import (
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
)

// A round of several large truncated results keeps at most MaxKeptOutput
// bytes of whole output in all, so its turn stays under the store's cap on
// one turn (4 MiB by default) however many calls the round made.
func TestKeptOutputsAreBoundedPerTurn(t *testing.T) {
	s := &Session{}
	var results []llm.ToolResult
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		s.keepFull(id, strings.Repeat("x", MaxKeptOutput))
		results = append(results, llm.ToolResult{ToolCallID: id})
	}
	kept := s.takeFull(results)
	total := 0
	for _, v := range kept {
		total += len(v)
	}
	if total > MaxKeptOutput+100 {
		t.Fatalf("kept %d bytes for one turn, want at most about %d", total, MaxKeptOutput)
	}
	if len(kept["a"]) < MaxKeptOutput || len(kept) != 1 {
		t.Fatalf("kept %d outputs (first %d bytes); want the first call's whole output only", len(kept), len(kept["a"]))
	}
	if again := s.takeFull(results); again != nil {
		t.Fatalf("outputs kept twice: %d", len(again))
	}
}
