package llm

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Helpers shared by the adapters' clients.

// CheckEventStream rejects a 2xx answer to a streaming request that is not
// an event stream (a proxy's page, a JSON body), which would otherwise read
// as an empty stream. A missing Content-Type is accepted.
func CheckEventStream(provider string, resp *http.Response) *Error {
	ct := resp.Header.Get("Content-Type")
	if ct == "" || strings.HasPrefix(ct, "text/event-stream") {
		return nil
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return &Error{Kind: ErrInvalidResponse, Provider: provider, RequestID: requestID(resp.Header),
		Message: fmt.Sprintf("asked for a stream but got Content-Type %q: %s", ct, BodyExcerpt(body))}
}

// ReadError turns a failed read of a body that Send returned into an
// *Error: the body already reports cancellation and the idle watchdog as
// *Error; anything else is an interrupted stream.
func ReadError(provider string, err error) *Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	return &Error{Kind: ErrStreamInterrupted, Provider: provider,
		Message: "reading the response failed: " + err.Error(), Err: err}
}

// WithRequestID sets the request id of err, when it is an *Error without
// one, from the response headers.
func WithRequestID(err error, h http.Header) error {
	var e *Error
	if errors.As(err, &e) && e.RequestID == "" {
		e.RequestID = requestID(h)
	}
	return err
}

// ValidateBaseURL checks an adapter's Config.BaseURL: empty (the default) or
// an absolute http(s) URL. field names it in the error, e.g.
// "anthropic Config.BaseURL".
func ValidateBaseURL(field, base, example string) error {
	if base == "" {
		return nil
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s must be an http(s) URL such as %s, got %q", field, example, base)
	}
	return nil
}
