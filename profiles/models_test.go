package profiles

import "testing"

// A cloud's spelling of a model (Bedrock's ids and cross-region inference
// profiles, Vertex AI's @date) has the provider model's window and
// knowledge cutoff; an unknown model has neither.
func TestModelFactsOfCloudIDs(t *testing.T) {
	for id, cutoff := range map[string]string{
		"anthropic.claude-sonnet-4-5-20250929-v1:0":        "2025-03",
		"us.anthropic.claude-sonnet-4-20250514-v1:0":       "2025-03",
		"eu.anthropic.claude-opus-4-1-20250805-v1:0":       "2025-03",
		"apac.anthropic.claude-haiku-4-5-20251001-v1:0":    "2025-02",
		"global.anthropic.claude-sonnet-4-5-20250929-v1:0": "2025-03",
		"us.anthropic.claude-3-5-sonnet-20241022-v2:0":     "2024-04",
		"anthropic.claude-3-haiku-20240307-v1:0":           "2023-08",
		"us.anthropic.claude-3-7-sonnet-20250219-v1:0":     "2024-10",
		"claude-sonnet-4-5@20250929":                       "2025-03",
	} {
		if got := knowledgeCutoff(id); got != cutoff {
			t.Errorf("knowledgeCutoff(%s) = %s, want %s", id, got, cutoff)
		}
		if got := contextWindow(id, 1); got != 200_000 {
			t.Errorf("contextWindow(%s) = %d, want 200000", id, got)
		}
	}
	if got := knowledgeCutoff("meta.llama3-70b-instruct-v1:0"); got != "unknown" {
		t.Errorf("an unknown model's cutoff is %q", got)
	}
}
