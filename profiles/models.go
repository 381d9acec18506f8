package profiles

import (
	"strings"

	"github.com/agentfleet/agentfleet/llm/pricing"
)

// modelFacts are what we know of a model family, matched by name prefix
// (longest first wins).
type modelFacts struct {
	prefix        string
	contextWindow int
	cutoff        string
}

var knownModels = []modelFacts{
	{"gpt-5", 400_000, "2024-09"},
	{"gpt-4o", 128_000, "2023-10"},
	{"gpt-oss", 131_072, "2024-06"},
	{"gpt-4.1", 1_047_576, "2024-06"},
	{"o3", 200_000, "2024-06"},
	{"o4-mini", 200_000, "2024-06"},
	{"claude-opus-4", 200_000, "2025-03"},
	{"claude-sonnet-4", 200_000, "2025-03"},
	{"claude-haiku-4", 200_000, "2025-02"},
	{"claude-3", 200_000, "2024-10"},
	{"claude-3-5-haiku", 200_000, "2024-07"},
	{"claude-3-5-sonnet", 200_000, "2024-04"},
	{"claude-3-haiku", 200_000, "2023-08"},
	{"claude-3-opus", 200_000, "2023-08"},
	{"gemini-3", 1_048_576, "2025-01"},
	{"gemini-2.5", 1_048_576, "2025-01"},
}

// lookupModel finds model's facts by its name, else by the provider's own
// id when the name is a cloud's spelling of it (Bedrock's
// us.anthropic.claude-sonnet-4-5-20250929-v1:0, Vertex AI's
// claude-sonnet-4-5@20250929: pricing.Canonical).
func lookupModel(model string) (modelFacts, bool) {
	if f, ok := lookupPrefix(model); ok {
		return f, true
	}
	return lookupPrefix(pricing.Canonical(model))
}

func lookupPrefix(model string) (modelFacts, bool) {
	best, found := modelFacts{}, false
	for _, f := range knownModels {
		if strings.HasPrefix(model, f.prefix) && len(f.prefix) > len(best.prefix) {
			best, found = f, true
		}
	}
	return best, found
}

// DefaultUnknownContextWindow is the window of an OpenAI-compatible model
// the table does not know (served by Ollama, vLLM, llama.cpp...): small
// on purpose, so the session compacts and warns rather than overflowing a
// server configured with a short context. WithUnknownModelWindow or
// WithContextWindow (the worker's provider setting context_window) changes it.
const DefaultUnknownContextWindow = 32_768

// contextWindow is the model's window, or def for models we do not know.
func contextWindow(model string, def int) int {
	if f, ok := lookupModel(model); ok {
		return f.contextWindow
	}
	return def
}

// knownModel reports whether the table knows model.
func knownModel(model string) bool {
	_, ok := lookupModel(model)
	return ok
}

// knowledgeCutoff is the model's training cutoff, or "unknown".
func knowledgeCutoff(model string) string {
	if f, ok := lookupModel(model); ok {
		return f.cutoff
	}
	return "unknown"
}
