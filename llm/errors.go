package llm

import (
	"errors"
	"fmt"
	"time"
)

// ErrorKind classifies every failure an adapter can report.
type ErrorKind string

const (
	ErrAuthentication    ErrorKind = "authentication"     // bad or missing key
	ErrPermission        ErrorKind = "permission"         // key lacks access to the model or feature
	ErrQuota             ErrorKind = "quota"              // billing or insufficient quota; not retried
	ErrRateLimited       ErrorKind = "rate_limited"       // slow down; RetryAfter says how long when known
	ErrOverloaded        ErrorKind = "overloaded"         // provider busy (Anthropic 529, 503)
	ErrContextLength     ErrorKind = "context_length"     // the request does not fit the context window
	ErrInvalidRequest    ErrorKind = "invalid_request"    // the request is malformed; fix it, do not retry
	ErrServer            ErrorKind = "server"             // 5xx
	ErrTransport         ErrorKind = "transport"          // connection failed before a response
	ErrStreamInterrupted ErrorKind = "stream_interrupted" // stream cut, stalled or broke mid-way
	ErrCanceled          ErrorKind = "canceled"           // the caller's context ended
	ErrInvalidResponse   ErrorKind = "invalid_response"   // the provider answered something we cannot parse
)

// Error is the one error type every adapter returns. Callers branch on Kind
// (or errors.As then Retryable) rather than on messages.
type Error struct {
	Kind       ErrorKind
	Provider   string        // "openai", "anthropic", "gemini", "chatcompat"
	Status     int           // HTTP status, 0 when there was no response
	Code       string        // provider error code or type, e.g. insufficient_quota
	Message    string        // provider message, or ours
	RequestID  string        // provider request id header, when sent
	RetryAfter time.Duration // how long the provider asked us to wait, 0 when unknown
	Err        error         // underlying cause, if any
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("llm %s: %s", e.Provider, e.Kind)
	if e.Status != 0 {
		msg += fmt.Sprintf(" (HTTP %d)", e.Status)
	}
	if e.Code != "" {
		msg += " [" + e.Code + "]"
	}
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.Err != nil && e.Message == "" {
		msg += ": " + e.Err.Error()
	}
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	if e.RequestID != "" {
		msg += " request_id=" + e.RequestID
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Retryable reports whether sending the same request again may succeed.
// Authentication, permission, quota, invalid-request, context-length,
// invalid-response and canceled errors are never retryable.
func (e *Error) Retryable() bool {
	switch e.Kind {
	case ErrRateLimited, ErrOverloaded, ErrServer, ErrTransport, ErrStreamInterrupted:
		return true
	}
	return false
}

// KindOf returns the Kind of err if it is (or wraps) an *Error, else "".
func KindOf(err error) ErrorKind {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Kind
	}
	return ""
}
