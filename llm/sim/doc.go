// Package sim is the simulated LLM provider: an HTTP server that speaks
// the wire formats of the llm adapters (OpenAI Responses, Chat Completions,
// Anthropic Messages, Gemini generateContent) from a script, so tests run the
// real adapters over real HTTP without a real provider.
//
// # Script
//
// Each request consumes the next Reply given to Enqueue, in order. A Reply
// says what to answer (text, reasoning with its signature, tool calls,
// usage, finish reason), how (whole or streamed in chunks of ChunkSize
// bytes; delays before the first byte and between events; a stall; a cut
// before the final event; an error event mid-stream) or which Failure to
// answer instead, rendered with each provider's real status, body and
// headers. Whether to stream follows the request. When the script is empty
// the server answers SetDefault's reply, or HTTP 500 saying the script is
// exhausted. A Reply with Raw set serves a response verbatim, as
// llm/sim/simtest replays recorded go-vcr cassettes.
//
// # Recording
//
// Requests returns every request received (method, path, headers, body) for
// assertions; WaitRequests waits for a count.
//
// # Tool choice and response formats
//
// Each dialect reads the request's tool choice and response format from its
// own fields (RecordedRequest.Constraints, in llm's words) and refuses a
// malformed one as the provider does, 400 with the provider's error shape:
// an unknown choice, a named tool that is not offered, a json_schema format
// without a name, Anthropic's forced choice with thinking on, Gemini's
// allowedFunctionNames outside mode ANY or responseJsonSchema without
// responseMimeType application/json. The answer obeys the request: when it
// forces a call of one named tool, scripted text is answered as that call
// with the text as its arguments (how a response format sent as a forced
// tool is answered); a scripted reply the choice forbids (calls under none,
// none where one is required) is answered 500 naming the script's mistake.
//
// # Provider tools
//
// A request's provider tools (OpenAI web_search and computer_use_preview,
// Gemini googleSearch, codeExecution, urlContext, Anthropic's typed
// tools) are recorded in Constraints.ProviderTools. Reply.ServerTools
// answers a server-run tool's work as content in the dialect's shape, and
// Reply.ComputerCalls answers OpenAI computer_call items; using a tool the
// request does not offer is the script's mistake. The OpenAI dialect
// refuses malformed computer use as the API does (see providertools.go).
//
// # Dialects
//
// A Dialect renders replies in one wire format, chosen by request path. Each
// dialect file registers itself from init. All Server methods are safe for
// concurrent use; Close releases stalled streams and is safe to call twice.
//
// cmd/simllm runs the server as a standalone process. Dev mode, the demo
// and the fleet benchmark run on it; it imports no test support, so
// production binaries may link it. Test helpers built on it (collecting a
// stream, a conformance exercise of an adapter, fast retries) are in
// llm/llmtest; recorded cassettes and the shared conformance data outside
// the module are read by llm/sim/simtest.
package sim
