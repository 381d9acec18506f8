package gemini

import (
	"io"
	"net/http"

	"github.com/agentfleet/agentfleet/llm"
)

// The functions below are the generateContent wire format without its
// transport, for llm/vertex, which sends the same bodies to Vertex AI with
// its own endpoints and authentication.

// EncodeBody returns the generateContent JSON body of req.
func EncodeBody(req llm.Request) ([]byte, error) { return encode(req) }

// ForcesAnswerTool reports whether req's ResponseFormat goes out as a
// forced function call rather than responseJsonSchema: when req also
// offers tools to a model before Gemini 3, which refuses function calling
// with a JSON response MIME type. Callers finish such answers with
// adapterkit.Answer, forced.
func ForcesAnswerTool(req llm.Request) bool {
	return req.ResponseFormat != nil && len(req.Tools) > 0 && !isGemini3(req.Model)
}

// ParseResponse decodes a whole generateContent response.
func ParseResponse(body []byte) (*llm.Response, error) { return parseResponse(body) }

// ClassifyError reads a Google API error body; nil when it is not one.
func ClassifyError(status int, h http.Header, body []byte) *llm.Error {
	return classify(status, h, body)
}

// DecodeSSE reads a streamGenerateContent?alt=sse stream, yielding unified
// events and ending with EventFinish or an error.
func DecodeSSE(body io.Reader, yield func(llm.StreamEvent, error) bool) { decodeStream(body, yield) }
