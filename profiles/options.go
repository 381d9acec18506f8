package profiles

import "github.com/agentfleet/agentfleet/llm"

// The effort itself travels in llm.Request.ReasoningEffort and each adapter
// maps it to its wire form (OpenAI reasoning.effort, an Anthropic thinking
// budget, a Gemini thinking budget or level); the options below add what a
// profile wants on top.

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

// anthropicOptions sends the profile's beta headers, plus interleaved
// thinking when an effort turns thinking on.
func (p *Profile) anthropicOptions(effort string) llm.ProviderOptions {
	o := map[string]any{}
	beta := append([]string(nil), p.beta...)
	if effort != "" && effort != "none" {
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

// geminiOptions sets safety settings and, with an effort, asks for thought
// summaries.
func geminiOptions(effort string) llm.ProviderOptions {
	safety := make([]any, len(geminiSafety))
	for i, s := range geminiSafety {
		safety[i] = s
	}
	o := map[string]any{"safety_settings": safety}
	if effort != "" && effort != "none" {
		o["include_thoughts"] = true
	}
	return llm.ProviderOptions{"gemini": o}
}
