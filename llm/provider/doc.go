// Package provider picks and builds the llm.Client for a configuration:
// an explicit provider, else detection from the base URL's host (an
// unofficial host means an OpenAI-compatible server, chatcompat), else from
// the model name (claude: anthropic; gemini: gemini; gpt-, chatgpt, codex
// and the o-series such as o1, o3, o4-mini: openai).
//
// Keys come from Config.APIKey, else the environment: OPENAI_API_KEY,
// ANTHROPIC_API_KEY, GEMINI_API_KEY then GOOGLE_API_KEY; for an
// OpenAI-compatible host, its dialect's variable (OPENROUTER_API_KEY,
// GROQ_API_KEY, MISTRAL_API_KEY, ...: chatcompat.Dialects). A missing key
// is an error naming the variable to set. chatcompat needs no key but
// needs a base URL, which a dialect named as the provider (ollama, groq,
// zai-coding, ...) or in Config.Dialect supplies; with a base URL and no
// dialect named, the URL's host picks the dialect (api.groq.com is groq),
// and an unknown host is the generic one. Config.DialectOverrides change
// single fields of the dialect.
//
// The package also holds the conformance test that replays the recorded
// provider traffic under ../shared/conformance/llm-cassettes against every
// adapter (cassette_test.go).
package provider
