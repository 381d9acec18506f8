// Package bedrock is the llm.Client for Anthropic models on AWS Bedrock:
// the Bedrock runtime's InvokeModel and InvokeModelWithResponseStream
// (POST {BaseURL}/model/{model-id}/invoke[-with-response-stream]), signed
// with SigV4 (the AWS SDK's signer, service "bedrock").
//
// # Why InvokeModel and not Converse
//
// InvokeModel takes Anthropic's own Messages body, so everything the
// anthropic adapter sends (thinking and its signatures, tool definitions,
// cache control, images) reaches the model unchanged; the body is built by
// llm/anthropic's Encoder and reshaped: "model" moves to the path (escaped
// as the SDK does, so "...-v1:0" is "...-v1%3A0"), "stream" is dropped (the
// operation says it), anthropic_version is bedrock-2023-05-31, and the
// beta names of ProviderOptions["anthropic"]["beta_headers"] go in
// anthropic_beta. Converse would be a second translation of the same
// conversation, losing Anthropic-only parts.
//
// # Stream
//
// The stream is AWS's binary event stream (application/vnd.amazon.eventstream,
// ReadMessage: length-prefixed messages with typed headers and CRC-32
// checks on the prelude and the whole message). Each "chunk" event carries
// {"bytes": base64} holding one Messages API stream event, which
// llm/anthropic's EventDecoder turns into unified events. An "exception"
// message (throttlingException, modelStreamErrorException, ...) ends the
// stream with a classified error; a stream that ends before message_stop is
// ErrStreamInterrupted.
//
// # Credentials
//
// Config.Credentials is an aws.CredentialsProvider read at each signing.
// DefaultChain gives the AWS SDK's default chain (its config package's
// LoadDefaultConfig: the environment, the shared config and credentials
// files with their profiles, assumed roles, SSO and credential_process,
// web identity, the container and instance roles), cached and refreshed
// by the SDK, with the region it finds; llm/provider uses it unless a
// credentials file is named. FileCredentials reads a JSON file such as
// `aws configure export-credentials --format process` writes, or a
// mounted secret; EnvCredentials only the AWS_* variables. A worker's
// configuration names a file or a profile, never the keys.
//
// # Model ids
//
// Request.Model is a Bedrock model id (anthropic.claude-sonnet-4-5-
// 20250929-v1:0), a cross-region inference profile id (us., eu., apac.,
// jp., au. or global. before it) or an inference profile's ARN; each goes
// in the path escaped, and llm/pricing and profiles know the cross-region
// ids as their base model.
//
// # Errors
//
// The error type comes from the X-Amzn-ErrorType header or the exception's
// :exception-type: throttling is ErrRateLimited, service unavailable and
// model not ready ErrOverloaded, validation ErrInvalidRequest (or
// ErrContextLength when it says the input is too long), access denied
// ErrPermission, an unrecognized client or bad signature
// ErrAuthentication.
package bedrock
