// Package openai is the llm.Client for the OpenAI Responses API
// (POST /v1/responses), streamed and not, over net/http with the llm SSE
// reader and retry policy.
//
// # Mapping
//
// System messages become developer messages in place; user text and images
// become input_text and input_image; assistant text becomes output_text;
// tool calls and results become function_call and function_call_output
// items. Function tools are sent with strict false. ToolChoice maps to
// auto, none, required or a named function. ReasoningEffort is
// reasoning.effort. ResponseFormat is text.format {type: json_schema,
// name, description, schema, strict}.
//
// # Reasoning round trip
//
// Requests are stateless by default (store false). Whenever reasoning is
// requested, include asks for reasoning.encrypted_content, and each reasoning
// item comes back as a KindReasoning part with Reasoning.Signature set to the
// encrypted content, Reasoning.ID to the rs_ id, and the item's JSON on Raw
// (Provider "openai"). Sending that message back echoes the item, with its
// summary and encrypted content, so the model keeps its chain of thought
// across tool rounds. With ProviderOptions["openai"]["store"] true the id is
// sent instead of relying on the encrypted content. Reasoning parts written by
// other providers are dropped.
//
// # Provider options
//
// ProviderOptions["openai"]: store (bool), reasoning_summary (auto, concise,
// detailed; off by default because some organizations may not request
// summaries), include ([]string, added to the request's include).
//
// # Built-in tools
//
// A ToolDefinition with a ProviderTool (web_search, with its
// search_context_size, user_location and filters; computer_use_preview)
// is sent as {type, params} beside the functions. The API's own calls in
// the output (web_search_call, file_search_call, code_interpreter_call)
// are KindServerTool content, not tool calls; they are not sent back (the
// answer's text carries what they found).
//
// # Computer use
//
// computer_use_preview is run on our side: its computer_call items are
// ToolCalls named by the definition's Name, with Arguments {action,
// pending_safety_checks} (ComputerArguments), and their results go back
// as computer_call_output with the result's image as the screenshot.
// Pending safety checks are acknowledged only by the tool's result
// ({"acknowledged_safety_checks": [ids]}), never by the adapter; see
// computer.go for the whole mapping. Client.Complete and Client.Stream
// name the calls (NameComputerCalls, NameComputerStream); ParseResponse
// alone names them by the type.
//
// # Errors
//
// ClassifyError reads OpenAI's error document: insufficient_quota (a 429)
// is ErrQuota and never retried; context_length_exceeded is ErrContextLength;
// invalid_api_key is ErrAuthentication; the x-request-id header is kept on
// every error that follows a response. Errors inside a stream (an error event or response.failed)
// end the stream with the classified error.
//
// A Client is safe for concurrent use.
package openai
