package profiles

import "github.com/agentfleet/agentfleet/llm"

// Thinking budgets (tokens) per reasoning effort, for providers that take a
// budget rather than an effort word.
var (
	anthropicThinkingBudget = map[string]int{"minimal": 1024, "low": 4096, "medium": 10000, "high": 32000, "xhigh": 64000}
	geminiThinkingBudget    = map[string]int{"minimal": 512, "low": 1024, "medium": 8192, "high": 24576, "xhigh": 32768}
)

// AnthropicInterleavedThinking is the beta header that lets Claude think
// between tool calls; sent whenever thinking is on.
const AnthropicInterleavedThinking = "interleaved-thinking-2025-05-14"

// openaiOptions: the effort travels in Request.ReasoningEffort (the adapter
// sets reasoning.effort); with an effort we ask for a reasoning summary and
// the encrypted reasoning items, and never store responses server-side.
func openaiOptions(effort string) llm.ProviderOptions {
	o := map[string]any{"store": false}
	if effort != "" {
		o["reasoning_summary"] = "auto"
		o["include"] = []string{"reasoning.encrypted_content"}
	}
	return llm.ProviderOptions{"openai": o}
}

// anthropicOptions maps effort to a thinking budget and sends the profile's
// beta headers (plus interleaved thinking when thinking is on).
func (p *Profile) anthropicOptions(effort string) llm.ProviderOptions {
	o := map[string]any{}
	beta := append([]string(nil), p.beta...)
	if budget, ok := anthropicThinkingBudget[effort]; ok {
		o["thinking_budget"] = budget
		beta = append(beta, AnthropicInterleavedThinking)
	}
	if len(beta) > 0 {
		o["beta_headers"] = beta
	}
	return llm.ProviderOptions{"anthropic": o}
}

// geminiSafety blocks only high-probability harm: source code and shell
// output trip the default thresholds too often.
var geminiSafety = []map[string]any{
	{"category": "HARM_CATEGORY_HARASSMENT", "threshold": "BLOCK_ONLY_HIGH"},
	{"category": "HARM_CATEGORY_HATE_SPEECH", "threshold": "BLOCK_ONLY_HIGH"},
	{"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "threshold": "BLOCK_ONLY_HIGH"},
	{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "threshold": "BLOCK_ONLY_HIGH"},
}

// geminiOptions sets safety settings and maps effort to thinkingConfig.
func geminiOptions(effort string) llm.ProviderOptions {
	safety := make([]any, len(geminiSafety))
	for i, s := range geminiSafety {
		safety[i] = s
	}
	o := map[string]any{"safety_settings": safety}
	if budget, ok := geminiThinkingBudget[effort]; ok {
		o["thinking_budget"] = budget
		o["include_thoughts"] = true
	}
	return llm.ProviderOptions{"gemini": o}
}
