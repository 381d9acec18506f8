// Package anthropic is the llm.Client for the Anthropic Messages API
// (POST /v1/messages), streamed and not, spoken directly over net/http.
//
// # Requests
//
// System messages, wherever they appear, are hoisted into the top-level
// system blocks. Tool results travel as tool_result blocks in a user turn
// (is_error kept), and neighbouring turns with the same role are merged
// because the API wants user and assistant to alternate. Empty text parts
// are dropped (the API rejects empty text blocks). Tool calls whose arguments
// did not parse are echoed with input {}.
//
// ToolChoice is tool_choice auto, none, any (required) or tool (named),
// with disable_parallel_tool_use false. The Messages API has no response
// format: a ResponseFormat is sent as one more tool, named and described
// as the format with its schema as input_schema, and a forced tool_choice
// (llm.AsAnswerTool: that tool, or any tool when the request offers its
// own); the call's input comes back as the answer's text, streamed as text
// deltas, and the turn ends with FinishStop. A forced tool choice (any or
// tool) turns extended thinking off, which the API refuses with it. The
// same holds on Bedrock and on Vertex, which use this encoding.
//
// Headers: x-api-key, anthropic-version (APIVersion) and, when
// ProviderOptions["anthropic"]["beta_headers"] lists any, anthropic-beta
// with the values joined by commas.
//
// # Extended thinking
//
// ProviderOptions["anthropic"]["thinking_budget"] sets budget_tokens
// directly (0 turns thinking off). Otherwise Request.ReasoningEffort picks
// it: minimal and low 1024, medium 4096, high 16384, xhigh 32768; "" or
// "none" means no thinking. The budget counts against max_tokens, so when
// max_tokens (Request.MaxOutputTokens, default 8192) is not above the
// budget it is raised to budget + max_tokens. Temperature is not sent while
// thinking, as the API only accepts the default then.
//
// Thinking and redacted_thinking blocks come back as reasoning parts with
// Provider "anthropic" and the block's JSON on ContentPart.Raw; they are
// echoed byte for byte on the next request, which the API requires to verify
// the signature. Reasoning written by another provider, or unsigned, is not
// sent.
//
// # Responses
//
// Usage.InputTokens is the whole prompt: input_tokens plus
// cache_read_input_tokens plus cache_creation_input_tokens, which are also
// reported as CacheReadTokens and CacheWriteTokens. Stop reasons map to
// llm.FinishKind: end_turn and stop_sequence to stop, max_tokens to length,
// tool_use to tool_calls, refusal to content_filter,
// model_context_window_exceeded to context_length.
//
// # Provider tools
//
// Anthropic's own tools (web search, web fetch, code execution, computer
// use with its display size, the text editor, bash) are offered as
// ToolDefinitions with a ProviderTool, in Request.Tools or in
// ProviderOptions["anthropic"]["tools"], and sent as {type, name,
// params}; computer use adds its beta. A definition's Cache puts
// cache_control on that tool (at most four marks a request, counted with
// the automatic ones). Server tool blocks in an answer (server_tool_use,
// web_search_tool_result and the other *_tool_result blocks) are
// KindServerTool content, never tool calls; they go back byte for byte in
// the next request. See servertools.go.
//
// # Errors
//
// Error documents are classified by error.type: authentication_error,
// permission_error, billing_error, rate_limit_error (with retry-after),
// overloaded_error (529), api_error; an invalid_request_error saying the
// prompt is too long is llm.ErrContextLength and one about the credit
// balance is llm.ErrQuota. The request-id header becomes Error.RequestID. An
// error event in the middle of a stream ends it with the same
// classification; a stream that ends before message_stop is
// llm.ErrStreamInterrupted.
//
// # Concurrency
//
// A Client is safe for concurrent use. Each Stream is consumed by one
// goroutine; breaking out of its loop closes the connection.
package anthropic
