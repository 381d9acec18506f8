// Package gemini is the llm.Client for the Gemini API: generateContent for
// whole answers and streamGenerateContent?alt=sse for streams, spoken
// directly over net/http. The key travels in the x-goog-api-key header.
//
// # Requests
//
// System messages become systemInstruction. Assistant turns have role
// "model"; tool results travel as functionResponse parts in a user turn,
// {"result": content} or, when the tool failed, {"error": content}, with
// images as inlineData parts after them. A functionResponse needs the
// function's name: ToolResult.Name, else the name of the call with the same
// id in the history (a result matching neither is an invalid request).
// Neighbouring turns with the same role are merged.
//
// Tool parameters are JSON Schema; declarations take Gemini's OpenAPI-style
// Schema, so types are upper-cased, ["T", "null"] becomes T with nullable,
// and keywords without a counterpart ($schema, additionalProperties, ...) are
// dropped. A tool without properties is declared without parameters.
//
// ToolChoice is toolConfig.functionCallingConfig: mode AUTO, NONE, ANY,
// or ANY with allowedFunctionNames [name]. ResponseFormat is
// generationConfig responseMimeType application/json with
// responseJsonSchema, the JSON Schema as given (it has no name and no
// strictness: decoding always follows the schema).
// Models before Gemini 3 refuse a JSON response type beside function
// calling, so a request with both sends the format as a forced function
// call instead (llm.AsAnswerTool, ForcesAnswerTool), whose arguments come
// back as the answer's text.
//
// ProviderOptions["gemini"]: safety_settings (a list of {category,
// threshold} objects, sent as safetySettings), thinking_budget (int, sent as
// thinkingBudget, wins over ReasoningEffort) and include_thoughts (bool).
//
// # Thinking
//
// Gemini 3 models take a thinking level: ReasoningEffort minimal, low,
// medium, high (xhigh means high) is sent upper-cased as thinkingLevel.
// Earlier models take a budget: none 0, minimal 128, low 1024, medium 8192,
// high 24576, xhigh 32768. includeThoughts is true whenever thinking is on
// unless include_thoughts says otherwise.
//
// Thought parts come back as reasoning parts. A thoughtSignature stays on
// the part it came with: ToolCall.Signature on a function call,
// ContentPart.Signature on text, Reasoning.Signature on a thought, and is
// sent back on the same part. Thought summaries without a signature are not
// sent back. In a stream, text chunks merge into one part until a chunk
// carrying a signature (often a final empty one) seals it.
//
// # Function call ids
//
// Gemini 3 gives each call an id; earlier models give none. A missing id is
// synthesized as "call_<responseId>_<n>", n the call's 0-based position in
// the response: the same each time a response is decoded, and unique across
// a conversation. Ids are echoed on functionCall and functionResponse.
//
// # Responses
//
// Usage.InputTokens is promptTokenCount (which includes cached tokens) plus
// toolUsePromptTokenCount; OutputTokens is candidatesTokenCount plus
// thoughtsTokenCount, ReasoningTokens the latter, CacheReadTokens is
// cachedContentTokenCount. finishReason STOP with function calls is
// llm.FinishToolCalls; MAX_TOKENS is length; SAFETY, RECITATION and the other
// blocking reasons are content_filter. A response without candidates is
// llm.ErrInvalidResponse naming promptFeedback.blockReason when present.
//
// # Built-in tools
//
// A ToolDefinition with a ProviderTool of type google_search,
// code_execution or url_context is sent as a tool of its own
// ({"googleSearch": {params}}) after the function declarations; with no
// functions, no toolConfig is sent. executableCode and
// codeExecutionResult parts in an answer are KindServerTool content and
// go back as they came. What google_search and url_context found, the
// candidate's groundingMetadata (webSearchQueries, groundingChunks,
// searchEntryPoint) and urlContextMetadata (urlMetadata), ends the
// message as a KindServerTool part each (ServerTool.Type the field's
// name, Name the tool's, Input the field's JSON); a stream's last one
// wins. They carry no Raw and are not sent back: the API takes no such
// part in a request.
//
// # Errors
//
// Errors are google.rpc.Status documents. A bad key is a 400
// INVALID_ARGUMENT whose ErrorInfo reason is API_KEY_INVALID:
// llm.ErrAuthentication. A 429 RESOURCE_EXHAUSTED is llm.ErrRateLimited
// with RetryAfter from RetryInfo.retryDelay, unless its QuotaFailure names a
// per-day quota (or credits are spent): llm.ErrQuota, not retried. A 400
// about the input token count is llm.ErrContextLength; 503 UNAVAILABLE is
// llm.ErrOverloaded; 500 INTERNAL is llm.ErrServer. An error chunk in a
// stream is classified the same way; a stream that ends before a chunk with
// finishReason is llm.ErrStreamInterrupted.
//
// # Concurrency
//
// A Client is safe for concurrent use. Each Stream is consumed by one
// goroutine; breaking out of its loop closes the connection.
package gemini
