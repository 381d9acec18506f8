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
// # Provider options
//
// ProviderOptions["chatcompat"]: max_tokens_field ("max_tokens" or
// "max_completion_tokens"), echo_reasoning (bool, default true).
//
// # Errors
//
// Error bodies are read with the OpenAI rules (openai.ClassifyError); an
// error object inside a stream ends it with the classified error. A Client is
// safe for concurrent use.
package chatcompat
