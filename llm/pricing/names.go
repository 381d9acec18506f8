package pricing

import (
	"regexp"
	"strings"
)

// lookup finds model in m: its exact entry, else the entry of its
// canonical name (see canonical), else the longest key the canonical name
// starts with followed by '-'.
func lookup[V any](m map[string]V, model string) (V, bool) {
	if v, ok := m[model]; ok {
		return v, true
	}
	name := canonical(model)
	if v, ok := m[name]; ok {
		return v, true
	}
	best := ""
	for k := range m {
		if len(k) > len(best) && strings.HasPrefix(name, k+"-") {
			best = k
		}
	}
	v, ok := m[best]
	return v, ok && best != ""
}

var (
	bedrockRegion  = regexp.MustCompile(`^(us|us-gov|eu|apac|jp|au|ca|global)\.`)
	bedrockVersion = regexp.MustCompile(`-v\d+(:\d+)?$`)
)

// Canonical returns the provider's own id of a model named as a cloud
// spells it (see canonical), lower-cased; other names come back
// lower-cased and trimmed. Model tables outside this package (context
// windows, knowledge cutoffs: profiles) use it to know Bedrock's and
// Vertex AI's ids as the models they serve.
func Canonical(model string) string { return canonical(model) }

// canonical maps a cloud's spelling of a model id to the provider's own,
// so one table entry prices the model wherever it is served:
//
//	us.anthropic.claude-sonnet-4-20250514-v1:0  (Bedrock, cross-region)
//	anthropic.claude-sonnet-4-20250514-v1:0     (Bedrock)
//	claude-sonnet-4@20250514                    (Vertex AI)
//	publishers/google/models/gemini-2.5-pro     (Vertex AI resource name)
//	models/gemini-2.5-pro                       (Gemini API resource name)
//
// all become the provider's id (claude-sonnet-4-20250514, gemini-2.5-pro).
func canonical(model string) string {
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	name = bedrockRegion.ReplaceAllString(name, "")
	name = strings.TrimPrefix(name, "anthropic.")
	name = bedrockVersion.ReplaceAllString(name, "")
	return strings.ReplaceAll(name, "@", "-")
}
