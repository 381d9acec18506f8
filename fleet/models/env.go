package models

import (
	"fmt"
	"maps"

	"github.com/agentfleet/agentfleet/llm/provider"
)

// Environment variables that name a model server for the openai profile
// and the model to ask for. Dev mode and `worker run` read them alike.
const (
	EnvLLMBaseURL = "AGENTFLEET_LLM_BASE_URL" // an OpenAI-compatible server (Ollama, vLLM...)
	EnvLLMAPIKey  = "AGENTFLEET_LLM_API_KEY"  //nolint:gosec // its key, if it wants one
	EnvModel      = "AGENTFLEET_MODEL"        // the model to ask for
)

// ApplyEnv fills providers from the environment where the
// configuration left them unset: AGENTFLEET_LLM_BASE_URL (with
// AGENTFLEET_MODEL, required then, and AGENTFLEET_LLM_API_KEY) serves the
// openai profile from that OpenAI-compatible server unless providers.openai
// is configured; AGENTFLEET_MODEL is the default model of every provider
// that names none, configured or found by its key variable. Provider keys
// need nothing here: a provider without api_key reads its usual variable
// (ANTHROPIC_API_KEY, ...).
func ApplyEnv(providers map[string]ProviderConfig, getenv func(string) string) (map[string]ProviderConfig, error) {
	out := make(map[string]ProviderConfig, len(providers)+1)
	maps.Copy(out, providers)
	model := getenv(EnvModel)
	if base := getenv(EnvLLMBaseURL); base != "" {
		if model == "" {
			return nil, fmt.Errorf("%s is set (%s) but %s is not: name the model the server serves, e.g. %s=qwen2.5-coder:7b",
				EnvLLMBaseURL, base, EnvModel, EnvModel)
		}
		if _, set := out["openai"]; !set {
			out["openai"] = ProviderConfig{Provider: provider.ChatCompat, BaseURL: base, APIKey: getenv(EnvLLMAPIKey)}
		}
	}
	if model != "" {
		for _, name := range []string{provider.Anthropic, provider.OpenAI, provider.Gemini} {
			if _, set := out[name]; !set && provider.HasKey(name, getenv) {
				out[name] = ProviderConfig{}
			}
		}
		for name, p := range out {
			if p.DefaultModel == "" {
				p.DefaultModel = model
				out[name] = p
			}
		}
	}
	return out, nil
}
