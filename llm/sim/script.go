package sim

import (
	"net/http"
	"time"

	"github.com/agentfleet/agentfleet/llm"
)

// Reply is what the server answers to one request: content (text,
// reasoning, tool calls, usage), how it is delivered (whole or streamed in
// chunks, with delays, a stall or a cut), or a failure instead. Whether it is
// streamed follows the request (stream: true, streamGenerateContent).
type Reply struct {
	Text               string          `json:"text,omitempty"`
	Reasoning          string          `json:"reasoning,omitempty"`
	ReasoningSignature string          `json:"reasoning_signature,omitempty"` // Anthropic signature, OpenAI encrypted_content, Gemini thoughtSignature
	ToolCalls          []ToolCallReply `json:"tool_calls,omitempty"`
	// ServerTools is work a server-run provider tool did, answered as
	// content; ComputerCalls are OpenAI computer_call items (see
	// providertools.go).
	ServerTools   []ServerToolReply   `json:"server_tools,omitempty"`
	ComputerCalls []ComputerCallReply `json:"computer_calls,omitempty"`
	Usage         llm.Usage           `json:"usage"`
	// FinishReason is the dialect's own word (stop, end_turn, STOP,
	// max_tokens...); empty means the dialect's normal end, or its tool-call
	// end when ToolCalls is set.
	FinishReason string `json:"finish_reason,omitempty"`
	// ID is the response id; empty means a generated one.
	ID string `json:"id,omitempty"`
	// Header holds extra response headers (for example a request id), sent
	// with whatever the reply answers; a dialect may still set its own.
	Header http.Header `json:"header,omitempty"`

	// ChunkSize is how many bytes of text, reasoning or arguments go in one
	// delta event; 0 means DefaultChunkSize.
	ChunkSize int `json:"chunk_size,omitempty"`
	// FirstByteDelay is waited before the status line is written.
	FirstByteDelay time.Duration `json:"first_byte_delay,omitempty"`
	// ChunkDelay is waited before every stream event after the first.
	ChunkDelay time.Duration `json:"chunk_delay,omitempty"`
	// StallAfterChunks, when > 0, stops writing after that many events and
	// holds the connection open until the client goes away or the server
	// closes.
	StallAfterChunks int `json:"stall_after_chunks,omitempty"`
	// CutAfterChunks, when > 0, closes the connection abruptly after that
	// many events, before the final one.
	CutAfterChunks int `json:"cut_after_chunks,omitempty"`
	// MidStreamError, when set, is sent as the dialect's error event after
	// ErrorAfterChunks events (0 means 1), ending the stream.
	MidStreamError   *Failure `json:"mid_stream_error,omitempty"`
	ErrorAfterChunks int      `json:"error_after_chunks,omitempty"`

	// Failure, when set, is answered instead of any content.
	Failure *Failure `json:"failure,omitempty"`
	// Raw, when set, is served verbatim instead of any content (a recorded
	// cassette response, or a deliberately broken body). ChunkSize,
	// delays, StallAfterChunks and CutAfterChunks apply to its body, cut
	// into ChunkSize-byte pieces (0: one piece).
	Raw *RawResponse `json:"raw,omitempty"`
}

// DefaultChunkSize is the delta size when Reply.ChunkSize is 0.
const DefaultChunkSize = 16

// ToolCallReply is one tool call the model makes. Arguments is the JSON text
// sent as is (it may be deliberately invalid).
type ToolCallReply struct {
	ID        string `json:"id,omitempty"` // empty: generated
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Failure is an error answered in a dialect's exact form. Kinds a provider
// renders as an error document (authentication, permission, quota,
// rate_limited, overloaded, context_length, invalid_request, server) are
// written by the dialect with its real status, body and headers. The others
// are the same for every dialect:
//
//   - transport: the connection is closed without a response;
//   - stream_interrupted: status 200 and headers, then the connection closes;
//   - canceled: no answer at all until the client gives up;
//   - invalid_response: status 200 with a body that is not JSON.
//
// HTML, when true, answers an HTML error page as a proxy or load balancer
// would (Status defaults to 502) whatever the Kind.
type Failure struct {
	Kind         llm.ErrorKind `json:"kind"`
	Status       int           `json:"status,omitempty"`         // 0: the dialect's status for Kind
	RetryAfter   string        `json:"retry_after,omitempty"`    // Retry-After header value, seconds or HTTP date
	RetryAfterMs string        `json:"retry_after_ms,omitempty"` // retry-after-ms header value
	Message      string        `json:"message,omitempty"`        // "": the provider's usual message
	HTML         bool          `json:"html,omitempty"`
}

// RawResponse is a response served byte for byte.
type RawResponse struct {
	Status int         `json:"status"` // 0: 200
	Header http.Header `json:"header,omitempty"`
	Body   string      `json:"body"`
}

// Text returns a reply with only text.
func Text(s string) Reply { return Reply{Text: s} }

// ToolCall returns a reply making one tool call.
func ToolCall(id, name, arguments string) Reply {
	return Reply{ToolCalls: []ToolCallReply{{ID: id, Name: name, Arguments: arguments}}}
}

// Fail returns a reply answering the given failure kind with the dialect's
// usual status and body.
func Fail(kind llm.ErrorKind) Reply { return Reply{Failure: &Failure{Kind: kind}} }

// chunks splits s into pieces of at most size bytes without splitting a
// UTF-8 sequence. An empty s gives no pieces.
func chunks(s string, size int) []string {
	if size <= 0 {
		size = DefaultChunkSize
	}
	var out []string
	for len(s) > 0 {
		n := min(size, len(s))
		for n < len(s) && n > 0 && s[n]&0xC0 == 0x80 {
			n++ // continue to the end of the rune
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// setFailureHeaders writes the retry headers a Failure asks for.
func setFailureHeaders(h http.Header, f Failure) {
	if f.RetryAfter != "" {
		h.Set("Retry-After", f.RetryAfter)
	}
	if f.RetryAfterMs != "" {
		h.Set("retry-after-ms", f.RetryAfterMs)
	}
}
