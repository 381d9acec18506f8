package anthropic

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// errorKinds maps the error.type of Anthropic's error documents.
var errorKinds = map[string]llm.ErrorKind{
	"authentication_error":  llm.ErrAuthentication,
	"permission_error":      llm.ErrPermission,
	"billing_error":         llm.ErrQuota,
	"rate_limit_error":      llm.ErrRateLimited,
	"overloaded_error":      llm.ErrOverloaded,
	"api_error":             llm.ErrServer,
	"timeout_error":         llm.ErrServer,
	"not_found_error":       llm.ErrInvalidRequest,
	"request_too_large":     llm.ErrContextLength,
	"invalid_request_error": llm.ErrInvalidRequest,
}

// classify turns an error response into an *llm.Error as Anthropic answers:
// {"type":"error","error":{"type":"rate_limit_error","message":"..."},
// "request_id":"req_..."}. Send fills the status, the request-id header and
// Retry-After; a body that is not such a document (a proxy's HTML page) falls
// back to the status.
func classify(status int, _ http.Header, body []byte) *llm.Error {
	var doc wireErrorBody
	if json.Unmarshal(body, &doc) != nil || doc.Error.Type == "" {
		return nil //nolint:nilerr // not an error document: the caller classifies by status
	}
	e := errorFor(doc.Error)
	e.Status, e.RequestID = status, doc.RequestID
	if e.Kind == "" {
		e.Kind = llm.ClassifyStatus(status)
	}
	return e
}

// streamEventError is the error an "error" stream event reports, for example
// an overload in the middle of an answer.
func streamEventError(w *wireError) *llm.Error {
	if w == nil {
		return invalidResponse("error event without an error object", nil)
	}
	e := errorFor(*w)
	if e.Kind == "" {
		e.Kind = llm.ErrServer
	}
	return e
}

// errorFor maps an error object; Kind stays empty for an unknown type.
func errorFor(w wireError) *llm.Error {
	e := &llm.Error{Provider: providerName, Code: w.Type, Message: w.Message, Kind: errorKinds[w.Type]}
	if e.Kind == llm.ErrInvalidRequest {
		e.Kind = refineInvalidRequest(w.Message)
	}
	return e
}

// refineInvalidRequest finds the conditions Anthropic reports as a plain
// invalid_request_error: an overlong prompt ("prompt is too long: 208310
// tokens > 200000 maximum") and an empty credit balance.
func refineInvalidRequest(msg string) llm.ErrorKind {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "prompt is too long"),
		strings.Contains(m, "context window"),
		strings.Contains(m, "context limit"),
		strings.Contains(m, "too many tokens"):
		return llm.ErrContextLength
	case strings.Contains(m, "credit balance"),
		strings.Contains(m, "billing"):
		return llm.ErrQuota
	}
	return llm.ErrInvalidRequest
}
