package anthropic

import (
	"testing"

	"github.com/agentfleet/agentfleet/llm"
)

// Each stop_reason maps to its unified kind; pause_turn (a long run of
// server tools) is a pause the agent continues, not the end of an answer.
func TestFinishReasons(t *testing.T) {
	for raw, want := range map[string]llm.FinishKind{
		"end_turn": llm.FinishStop, "max_tokens": llm.FinishLength, "tool_use": llm.FinishToolCalls,
		"pause_turn": llm.FinishPaused, "refusal": llm.FinishContentFilter, "something_new": llm.FinishOther,
	} {
		if got := finishReason(raw); got.Reason != want || got.Raw != raw {
			t.Errorf("finishReason(%q) = %+v, want %s", raw, got, want)
		}
	}
}
