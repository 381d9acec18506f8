package pricing

// OutputDate is when the output limits below were taken from the
// providers' model documentation.
const OutputDate = "2026-11-27"

// MaxOutputTokens returns the most tokens one response of model may have
// (reasoning included where the provider counts it as output), looked up
// as Table.Lookup looks up prices; ok is false when the table does not
// know the model, and a caller then sends no larger limit than it was
// configured with.
//
// Sources, as documented on OutputDate:
//   - Anthropic: "Models overview" of the Claude API documentation (max
//     output per model; the same on Bedrock and Vertex AI).
//   - OpenAI: each model's page of the API documentation ("max output
//     tokens").
//   - Google: the Gemini API models page ("output token limit").
func MaxOutputTokens(model string) (int, bool) {
	return lookup(maxOutput, model)
}

var maxOutput = map[string]int{
	// Anthropic
	"claude-opus-4-5":   64_000,
	"claude-opus-4-1":   32_000,
	"claude-opus-4":     32_000,
	"claude-sonnet-4-5": 64_000,
	"claude-sonnet-4":   64_000,
	"claude-3-7-sonnet": 64_000,
	"claude-haiku-4-5":  64_000,
	"claude-3-5-haiku":  8_192,
	"claude-3-5-sonnet": 8_192,
	"claude-3-haiku":    4_096,
	"claude-3-opus":     4_096,

	// OpenAI
	"gpt-5":        128_000,
	"gpt-5-codex":  128_000,
	"gpt-5-mini":   128_000,
	"gpt-5-nano":   128_000,
	"gpt-5.1":      128_000,
	"gpt-5.2":      128_000,
	"gpt-4.1":      32_768,
	"gpt-4.1-mini": 32_768,
	"gpt-4o":       16_384,
	"gpt-4o-mini":  16_384,
	"o3":           100_000,
	"o4-mini":      100_000,

	// Google
	"gemini-2.5-pro":         65_536,
	"gemini-2.5-flash":       65_536,
	"gemini-2.5-flash-lite":  65_536,
	"gemini-3-pro-preview":   65_536,
	"gemini-3-flash-preview": 65_536,
}
