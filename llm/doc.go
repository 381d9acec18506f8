// Package llm is the unified client for large language models: one set of
// types (Request, Response, Message, ContentPart, ToolDefinition, ToolCall,
// ToolResult, StreamEvent, Usage, FinishReason), one error type that
// classifies every failure (Error with an ErrorKind), and one retry policy,
// shared by the provider adapters in the subpackages openai, anthropic,
// gemini and chatcompat.
//
// # Contracts
//
// A Client's Stream always ends with exactly one terminal element: an
// EventFinish event carrying the final Response, or an error. Only the HTTP
// request is retried; a stream that has delivered events is never restarted,
// it fails with ErrStreamInterrupted instead.
//
// Provider-specific items that must be echoed back (thinking signatures,
// encrypted reasoning, Gemini thoughtSignature) travel on ContentPart.Raw,
// tagged with ContentPart.Provider, so a conversation round-trips exactly.
package llm
