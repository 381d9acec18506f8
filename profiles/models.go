package profiles

import "strings"

// modelFacts are what we know of a model family, matched by name prefix
// (longest first wins).
type modelFacts struct {
	prefix        string
	contextWindow int
	cutoff        string
}

var knownModels = []modelFacts{
	{"gpt-5", 400_000, "2024-09"},
	{"gpt-4.1", 1_047_576, "2024-06"},
	{"o3", 200_000, "2024-06"},
	{"o4-mini", 200_000, "2024-06"},
	{"claude-opus-4", 200_000, "2025-03"},
	{"claude-sonnet-4", 200_000, "2025-03"},
	{"claude-haiku-4", 200_000, "2025-02"},
	{"claude-3", 200_000, "2024-10"},
	{"gemini-3", 1_048_576, "2025-01"},
	{"gemini-2.5", 1_048_576, "2025-01"},
}

func lookupModel(model string) (modelFacts, bool) {
	best, found := modelFacts{}, false
	for _, f := range knownModels {
		if strings.HasPrefix(model, f.prefix) && len(f.prefix) > len(best.prefix) {
			best, found = f, true
		}
	}
	return best, found
}

// contextWindow is the model's window, or def for models we do not know.
func contextWindow(model string, def int) int {
	if f, ok := lookupModel(model); ok {
		return f.contextWindow
	}
	return def
}

// knowledgeCutoff is the model's training cutoff, or "unknown".
func knowledgeCutoff(model string) string {
	if f, ok := lookupModel(model); ok {
		return f.cutoff
	}
	return "unknown"
}
