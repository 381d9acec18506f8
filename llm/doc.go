// Package llm is the unified client for large language models: one set of
// types (Request, Response, Message, ContentPart, ToolDefinition, ToolCall,
// ToolResult, StreamEvent, Usage, FinishReason), one error type that
// classifies every failure (Error with an ErrorKind), and one retry policy,
// shared by the provider adapters in the subpackages openai, anthropic,
// gemini and chatcompat (with dialects for OpenAI-compatible hosts), and
// the cloud routes bedrock, vertex and azure.
//
// # Contracts
//
// A Client's Stream always ends with exactly one terminal element: an
// EventFinish event carrying the final Response, or an error. Only the HTTP
// request is retried; a stream that has delivered events is never restarted,
// it fails with ErrStreamInterrupted instead. A 2xx answer to a streaming
// request that is not text/event-stream is ErrInvalidResponse, never an
// empty or interrupted stream. Every error a Client returns is an *Error
// naming the provider; once a response has arrived, it carries the request
// id from the first of RequestIDHeaders present. Cancelling ctx ends a call
// or a stream with ErrCanceled. A tool call whose arguments are not valid
// JSON is kept with ToolCall.ArgumentsError set rather than failing the
// turn.
//
// Provider-specific items that must be echoed back (thinking signatures,
// encrypted reasoning, Gemini thoughtSignature) travel on ContentPart.Raw,
// tagged with ContentPart.Provider, so a conversation round-trips exactly.
//
// # Tool choice and structured output
//
// Request.ToolChoice (auto, none, required, a named tool) is checked by
// CheckToolChoice on every adapter before anything is sent: a named tool
// must be among Request.Tools, required needs tools. Request.ResponseFormat
// asks for one JSON object matching a schema; each adapter's doc says how
// its wire carries it, natively or as a forced tool call (AsAnswerTool).
// Either way the answer is the response's text, and a response that ends
// the turn is validated against the schema (CheckAnswer; a mismatch is
// ErrInvalidResponse wrapping a *SchemaError that lists each violation),
// so a caller may show the model its mistake and ask again. A response
// that calls tools is not validated: the answer comes later. The schema's
// root must be an object, which every wire format accepts.
//
// # Provider tools
//
// A ToolDefinition may carry a ProviderTool: one of a provider's own
// tools, by the provider's type name and parameters. Adapters of that
// provider send it in its shape, others refuse it (Chat Completions has
// none). Server-run tools come back as KindServerTool content with a
// ServerTool and the provider's JSON, never as calls, so the loop has
// nothing to run; client-run ones (computer use, the text editor) are
// called by name like any tool. Profiles offer them through
// ProviderOptions[provider]["tools"], merged by ToolsFor; Cache on a
// definition asks for a cache breakpoint after it.
//
// # Shared machinery for adapters
//
// Send is the one HTTP path: it applies RetryPolicy (transport errors,
// 408, 409, 429, 5xx and 529 retried with exponential backoff and equal
// jitter; Retry-After in seconds or as an HTTP date, retry-after-ms and a
// wait the adapter's classifier read from the body honoured up to
// MaxRetryAfter, beyond which the rate-limit error returns at once with
// RetryAfter set; authentication, permission, quota, invalid-request and
// context-length errors never retried) and returns a 2xx response whose body
// is guarded: no byte for IdleTimeout ends it with ErrStreamInterrupted, and
// cancelling ctx closes it at once so a blocked read returns ErrCanceled.
// Every error Send returns or the body's Read reports is an *Error.
// RetryPolicy.Sleep is injectable so tests never wait.
//
// SSEReader decodes text/event-stream (event, data, id, comments, multi-line
// data, LF and CRLF, lines of any length; "[DONE]" arrives as data).
// ParseToolArguments keeps a model's invalid JSON arguments with the reason
// instead of failing. ClassifyStatus and ErrorFromStatus are the fallback
// classification for bodies that are not provider error documents, such as
// a proxy's HTML 502 page (BodyExcerpt turns it into one line of text).
//
// The four adapters share one Complete and Stream path (the internal
// package adapterkit) built on these pieces; only the wire formats differ.
// llmtest.Exercise is the conformance suite every adapter runs.
//
// The simulated provider is llm/sim and its test helpers are llm/llmtest;
// provider choice from configuration is llm/provider.
package llm
