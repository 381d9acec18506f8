package openai

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// wireError is OpenAI's error object, used by the Responses and Chat
// Completions APIs and copied by most compatible servers.
type wireError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"` // a string, sometimes a number, often null
	Param   any    `json:"param"`
}

func (e *wireError) code() string {
	switch c := e.Code.(type) {
	case string:
		return c
	case float64:
		return strconv.FormatFloat(c, 'f', -1, 64)
	}
	return ""
}

// ClassifyError turns an OpenAI-style error response into an *llm.Error.
// It is the Classify function for llm.Send and is shared with chatcompat.
// As OpenAI answers: insufficient_quota is a 429 that is ErrQuota (never
// retried), context_length_exceeded is a 400 that is ErrContextLength,
// invalid_api_key is a 401. A body that is not an error document (an HTML
// page from a proxy) falls back to the status.
func ClassifyError(status int, _ http.Header, body []byte) *llm.Error {
	var doc struct {
		Error *wireError `json:"error"`
	}
	if json.Unmarshal(body, &doc) != nil || doc.Error == nil {
		return llm.ErrorFromStatus(status, body)
	}
	e := doc.Error
	code := e.code()
	if code == "" {
		code = e.Type
	}
	return &llm.Error{Kind: errorKind(status, code, e.Type, e.Message), Status: status, Code: code, Message: e.Message}
}

// errorKind refines the status with the error code, type and message.
func errorKind(status int, code, typ, message string) llm.ErrorKind {
	lower := strings.ToLower(message)
	switch {
	case code == "insufficient_quota" || typ == "insufficient_quota" || code == "billing_hard_limit_reached":
		return llm.ErrQuota
	case code == "context_length_exceeded" || strings.Contains(lower, "context window") ||
		strings.Contains(lower, "maximum context length") || strings.Contains(lower, "context length"):
		return llm.ErrContextLength
	case code == "invalid_api_key" || typ == "authentication_error":
		return llm.ErrAuthentication
	case code == "rate_limit_exceeded":
		return llm.ErrRateLimited
	case code == "server_error" || typ == "server_error":
		if status == http.StatusServiceUnavailable {
			return llm.ErrOverloaded
		}
		return llm.ErrServer
	}
	if status == 0 {
		return llm.ErrServer
	}
	return llm.ClassifyStatus(status)
}

// streamError classifies an error reported inside a stream (an error event
// or a failed response), where there is no HTTP status to go by.
func streamError(code, message string) *llm.Error {
	kind := errorKind(0, code, "", message)
	switch code {
	case "invalid_prompt", "invalid_request_error", "invalid_value":
		kind = llm.ErrInvalidRequest
	case "server_is_overloaded", "slow_down":
		kind = llm.ErrOverloaded
	}
	return &llm.Error{Kind: kind, Provider: ProviderName, Code: code, Message: message}
}
