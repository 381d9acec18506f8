// Package vertex is the llm.Client for models on Google Cloud Vertex AI:
// Gemini models (publisher google: generateContent and
// streamGenerateContent?alt=sse, the bodies of llm/gemini) and Anthropic
// models (publisher anthropic: rawPredict and streamRawPredict, the
// Messages body of llm/anthropic without "model" and with
// anthropic_version vertex-2023-10-16, beta names in the anthropic-beta
// header). The publisher follows the model name: claude* is Anthropic's,
// anything else Google's. URLs are
// {BaseURL}/{v1|v1beta1}/projects/{project}/locations/{region}/publishers/{publisher}/models/{model}:{method}
// (Config.APIVersion, default v1),
// BaseURL defaulting to https://{region}-aiplatform.googleapis.com
// (https://aiplatform.googleapis.com for the global region).
//
// A ResponseFormat goes to Gemini models as responseJsonSchema and to
// Claude models as a forced tool call whose input comes back as the
// answer's text (see llm/anthropic).
//
// # Authentication
//
// Every request carries "Authorization: Bearer <token>" from
// Config.Tokens, asked again at each attempt (the source caches tokens
// until they expire). ServiceAccountTokens signs a JWT with a service
// account's key file and exchanges it at the key's token_uri;
// DefaultTokens uses Application Default Credentials, which covers
// workload identity (GKE Workload Identity and other Google Cloud
// runtimes through the metadata server, or a workload identity federation
// file named by GOOGLE_APPLICATION_CREDENTIALS). A worker's configuration
// names the key file, never the key.
//
// # Errors
//
// Google's error body ({"error": {"code", "message", "status"}}) is read
// with llm/gemini's rules, an Anthropic error body with llm/anthropic's.
package vertex
