// Package azure is the llm.Client for Azure OpenAI: OpenAI models deployed
// in an Azure resource, reached by deployment.
//
// # Requests
//
// Request.Model names the deployment (the name given when the model was
// deployed, not the model's own). With API "chat" (the default) requests
// go to
//
//	{Endpoint}/openai/deployments/{deployment}/chat/completions?api-version={APIVersion}
//
// with the Chat Completions body of llm/chatcompat (the generic dialect:
// max_completion_tokens, or max_tokens for gpt-4* and gpt-3.5* names).
// With API "responses" they go to the v1 route
//
//	{Endpoint}/openai/v1/responses
//
// with the Responses body of llm/openai, which takes no api-version.
// APIVersion defaults to DefaultAPIVersion, the latest GA data-plane
// version this adapter was written against.
//
// # Authentication
//
// Config.APIKey goes in the api-key header, never as a bearer token.
// Config.Credential instead authenticates with Entra ID (Microsoft
// identity): each attempt asks it for a token of Config.Scope (default
// EntraScope, Azure AI services) and sends "Authorization: Bearer". The
// token is sent only to an https endpoint (or a loopback address): a
// plain-http endpoint with a credential is refused at New.
// DefaultCredential is the Azure SDK's default chain (azidentity): a
// service principal from the AZURE_* environment, workload identity, a
// managed identity, the Azure CLI's login; the SDK caches and refreshes
// its tokens. llm/provider takes it when no key is set (or with
// AzureAuth "entra"). The identity needs a role that may call the model,
// such as Cognitive Services OpenAI User, on the resource.
//
// # Errors and answers
//
// Azure's error bodies and answers have OpenAI's shape and are read with
// llm/openai's and llm/chatcompat's rules; a prompt or answer stopped by
// Azure's content filter is ErrInvalidRequest (code content_filter) or a
// FinishContentFilter answer, as OpenAI's are.
package azure
