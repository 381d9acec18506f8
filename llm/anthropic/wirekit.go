package anthropic

import (
	"io"
	"net/http"

	"github.com/agentfleet/agentfleet/llm"
)

// The functions below are the Messages API wire format without its
// transport, for adapters that reach Anthropic models through another
// service (llm/bedrock, llm/vertex): they reshape the body, authenticate
// and frame the stream in that service's way.

// Encoder builds Messages API request bodies, keeping the encoded tool
// definitions of the last tool sets it saw. It is safe for concurrent use.
type Encoder struct {
	tools toolsCache
}

// Encode returns the JSON body of req (with "model", and "stream" when
// stream is set; a ResponseFormat sent as a forced tool call, so the
// caller finishes answers with adapterkit.Answer, forced) and the beta names ProviderOptions["anthropic"]
// ["beta_headers"] asks for.
func (e *Encoder) Encode(req llm.Request, stream bool) (body []byte, betas []string, err error) {
	if req, err = prepareRequest(req); err != nil {
		return nil, nil, err
	}
	w, err := buildRequest(req, stream)
	if err != nil {
		return nil, nil, err
	}
	if betas, err = req.ProviderOptions.Strings(providerName, "beta_headers"); err != nil {
		return nil, nil, err
	}
	body, err = requestBody(w, req.Tools, &e.tools)
	if err != nil {
		return nil, nil, invalidRequest("encoding the request: " + err.Error())
	}
	return body, betas, nil
}

// ParseResponse decodes a whole Messages API response.
func ParseResponse(body []byte) (*llm.Response, error) { return parseResponse(body) }

// ClassifyError reads a Messages API error body; nil when it is not one.
func ClassifyError(status int, h http.Header, body []byte) *llm.Error {
	return classify(status, h, body)
}

// DecodeSSE reads a Messages API server-sent event stream to message_stop,
// yielding unified events and ending with EventFinish or an error.
func DecodeSSE(body io.Reader, yield func(llm.StreamEvent, error) bool) { decodeStream(body, yield) }

// EventDecoder decodes Messages API stream events that arrive without SSE
// framing (each one a JSON object whose "type" names it). One decoder
// serves one stream.
type EventDecoder struct {
	d *streamDecoder
}

// NewEventDecoder returns a decoder for one stream.
func NewEventDecoder() *EventDecoder { return &EventDecoder{d: newStreamDecoder()} }

// Feed decodes one event. The unified events it produced are valid until
// the next call; done reports message_stop, after which Finish gives the
// response.
func (e *EventDecoder) Feed(event []byte) (out []llm.StreamEvent, done bool, err error) {
	done, err = e.d.feed("", string(event))
	return e.d.out, done, err
}

// Finish closes the blocks left open and returns the final events and the
// assembled response.
func (e *EventDecoder) Finish() ([]llm.StreamEvent, *llm.Response) {
	resp := e.d.finish()
	return e.d.out, resp
}
