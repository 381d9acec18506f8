package models

import "github.com/agentfleet/agentfleet/llm/chatcompat"

// ProviderConfig says how a worker reaches the provider behind one profile.
type ProviderConfig struct {
	// Provider is the llm/provider name to use for this profile: "" means the
	// profile's own (openai, anthropic, gemini); "chatcompat", "ollama",
	// "vllm"... serve the openai profile from an OpenAI-compatible server.
	Provider string `mapstructure:"provider"`
	// Dialect names the OpenAI-compatible host's dialect (llm/chatcompat
	// Dialects: groq, mistral, zai-coding...) when Provider does not; ""
	// means the base URL's host picks it.
	Dialect string `mapstructure:"dialect"`
	// DialectOverrides change single fields of that dialect
	// (max_tokens_field, stream_usage, header, ...).
	DialectOverrides chatcompat.Overrides `mapstructure:"dialect_overrides"`
	// APIKey is the provider key; "" means the provider's usual environment
	// variable (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY).
	APIKey string `mapstructure:"api_key"`
	// BaseURL overrides the provider's API root (a proxy, or the simulated provider of llm/sim).
	BaseURL string `mapstructure:"base_url"`
	// Credential names the API key for fleet-wide rate limits (never the
	// key itself): workers sharing a key give it the same name, and
	// rate_limits rules name it. "" means "default".
	Credential string `mapstructure:"credential"`
	// DefaultModel is used when a spec names no model; "" means the
	// profile's default.
	DefaultModel string `mapstructure:"default_model"`
	// FallbackModel, when set, answers a request whose model stays
	// overloaded (529, 503) through the retries (llm/fallback); the turn
	// records it as the model that answered. "" means none.
	FallbackModel string `mapstructure:"fallback_model"`
	// InputPerMTok and OutputPerMTok price a million tokens in USD for a
	// model neither Config.Prices nor the built-in table (llm/pricing)
	// knows; cache reads and writes are then priced as input. 0 means
	// unknown (cost 0).
	InputPerMTok  float64 `mapstructure:"input_per_mtok"`
	OutputPerMTok float64 `mapstructure:"output_per_mtok"`
	// Region and Project locate a cloud provider (bedrock: region; vertex:
	// project and region).
	Region  string `mapstructure:"region"`
	Project string `mapstructure:"project"`
	// CredentialsFile names a cloud provider's credentials on this worker
	// (bedrock: a JSON file with AccessKeyId and SecretAccessKey, default
	// the AWS_* variables; vertex: a service account key, default
	// Application Default Credentials, which include workload identity).
	CredentialsFile string `mapstructure:"credentials_file"`
	// AWSProfile (bedrock) names the shared config profile of the AWS
	// SDK's default chain; "" means AWS_PROFILE, else "default".
	AWSProfile string `mapstructure:"aws_profile"`
	// APIVersion (azure) is Azure OpenAI's api-version; "" means
	// AZURE_OPENAI_API_VERSION, else the adapter's default.
	APIVersion string `mapstructure:"api_version"`
	// AzureAuth (azure) is "key", "entra" (Entra ID through the Azure
	// SDK's default credential chain), or "" for the key when one is set,
	// else Entra ID.
	AzureAuth string `mapstructure:"azure_auth"`
	// Choices are more providers for this profile, by name (for example
	// "bedrock" and "vertex" next to anthropic's own API); a task picks one
	// with session.provider, the profile's own config serving the rest.
	Choices map[string]ProviderConfig `mapstructure:"choices"`
	// ContextWindow is the context size, in tokens, of this provider's
	// models (an OpenAI-compatible server's configured context, say); 0
	// means each model's known window (32,768 for models the table does
	// not know). It bounds a task's context.window.
	ContextWindow int `mapstructure:"context_window"`
	// SummaryModel writes context summaries when a task names none; ""
	// means the session's model.
	SummaryModel string `mapstructure:"summary_model"`
}
