// Package provider picks and builds the llm.Client for a configuration:
// an explicit provider, else detection from the base URL's host (an
// unofficial host means an OpenAI-compatible server, chatcompat), else from
// the model name (claude: anthropic; gemini: gemini; gpt-, chatgpt, codex
// and the o-series such as o1, o3, o4-mini: openai).
//
// Keys come from Config.APIKey, else the environment: OPENAI_API_KEY,
// ANTHROPIC_API_KEY, GEMINI_API_KEY then GOOGLE_API_KEY; for the chatcompat
// shortcuts openrouter and groq, OPENROUTER_API_KEY and GROQ_API_KEY. A
// missing key is an error naming the variable to set. chatcompat needs no key
// but needs a base URL (the shortcuts ollama, vllm, llamacpp, openrouter and
// groq supply the usual one).
//
// The package also holds the conformance test that replays the recorded
// provider traffic under ../shared/conformance/llm-cassettes against every
// adapter (cassette_test.go).
package provider
