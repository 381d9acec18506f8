// Package chatcompat is the llm.Client for OpenAI-compatible Chat
// Completions (POST {BaseURL}/chat/completions): OpenAI itself, Ollama, vLLM,
// the llama.cpp server, OpenRouter, Groq and the others that copy the format.
//
// # Mapping
//
// System, user, assistant and tool messages map one to one; user content is
// a plain string unless it carries images. Assistant tool calls and
// tool results use tool_calls and tool_call_id. ReasoningEffort is sent as
// reasoning_effort. The output limit is max_completion_tokens, or max_tokens
// for gpt-4* and gpt-3.5* models (override with the max_tokens_field
// option). Streams ask for usage with stream_options.include_usage.
// ToolChoice is auto, none, required or {type: function, function: {name}};
// ResponseFormat is response_format {type: json_schema, json_schema:
// {name, description, schema, strict}}.
//
// # Responses
//
// Only the first choice is read; a response without choices is
// ErrInvalidResponse. Reasoning arrives as reasoning_content (llama.cpp,
// vLLM, DeepSeek) or reasoning (OpenRouter, Ollama) and becomes a
// KindReasoning part tagged with Provider "chatcompat"; it is echoed back as
// reasoning_content, which gpt-oss servers need between tool rounds (turn it
// off with echo_reasoning false for servers that reject it, such as
// DeepSeek). Streamed tool-call fragments are assembled by index; servers
// that omit the index are grouped by id. A "stop" finish with tool calls is
// reported as FinishToolCalls. A stream that ends after a finish_reason but
// without [DONE] still finishes.
//
// # Dialects
//
// Hosts copy the format with differences that make them refuse requests:
// the output limit's name, the base path, headers, and which optional
// fields they accept. A Dialect (dialect.go, each entry citing its host's
// API documentation) says these for one host; Config.Dialect names it, or
// the base URL's host picks it, else Generic (OpenAI's own behaviour).
// Overrides change single fields. A field a dialect does not accept is not
// sent: reasoning effort goes where the dialect takes it (reasoning_effort,
// OpenRouter's reasoning.effort, Z.ai's thinking.type) or nowhere;
// stream_options only where accepted; a forced tool choice (required, a
// named tool) sent to a dialect that cannot honour it is an invalid
// request. Request.ResponseFormat is sent as response_format json_schema,
// as JSON mode with the schema in a first system message (json_object),
// or as a forced tool call (tool); the answer is validated either way.
//
// # Provider options
//
// ProviderOptions["chatcompat"]: max_tokens_field ("max_tokens" or
// "max_completion_tokens", wins over the dialect's), echo_reasoning (bool,
// default the dialect's), parallel_tool_calls (bool, sent only to dialects
// that accept it).
//
// # Errors
//
// Error bodies are read with the OpenAI rules (openai.ClassifyError); an
// error object inside a stream ends it with the classified error. A Client is
// safe for concurrent use.
package chatcompat
