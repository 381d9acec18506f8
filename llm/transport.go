package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// HTTPConfig is what Send needs from an adapter.
type HTTPConfig struct {
	// Provider names the adapter in errors ("openai", ...).
	Provider string
	// Client sends the requests; nil uses a shared client without a
	// timeout (streams may run for many minutes; the idle watchdog and ctx
	// bound them instead).
	Client *http.Client
	// Retry is the retry policy; zero fields mean defaults.
	Retry RetryPolicy
	// Classify turns a non-2xx response into an *Error, reading the
	// provider's error body. It may set Kind, Code, Message and RetryAfter
	// (for a wait carried in the body, such as Gemini's RetryInfo); Send
	// fills Provider, Status, RequestID and a header Retry-After when they
	// are unset. nil, or a nil result, falls back to ErrorFromStatus.
	Classify func(status int, header http.Header, body []byte) *Error
}

// defaultHTTPClient keeps many idle connections per provider host. The
// standard transport keeps two, so a worker running hundreds of sessions
// against one provider would dial (and over HTTPS/1.1, handshake) again for
// most requests; over HTTP/2 the transport multiplexes anyway.
var defaultHTTPClient = &http.Client{Transport: newDefaultTransport()}

// DefaultTransport is the transport of the client adapters use when
// given none, for a caller that wraps it (llm/ratelimit).
func DefaultTransport() http.RoundTripper { return defaultHTTPClient.Transport }

// MaxIdleConnsPerHost is how many idle connections the default client keeps
// per provider host.
const MaxIdleConnsPerHost = 1024

func newDefaultTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 2 * MaxIdleConnsPerHost
	t.MaxIdleConnsPerHost = MaxIdleConnsPerHost
	return t
}

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 1 << 20

// RequestIDHeaders are the response headers that carry a provider request id,
// in the order Send looks for them.
var RequestIDHeaders = []string{"x-request-id", "request-id", "x-goog-request-id", "cf-ray"}

// Send sends the request that build makes, retrying per cfg.Retry: transport
// errors and every *Error whose Retryable is true (408, 409, 429, 5xx, 529)
// are retried with exponential backoff and jitter, or after the wait the
// provider asked for when it is at most MaxRetryAfter; a longer requested wait
// returns the error at once with RetryAfter set. build is called once per
// attempt and must return a fresh request bound to ctx; an error it
// returns is ErrInvalidRequest unless it is an *Error already (a signing
// credential that could not be had is ErrAuthentication).
//
// On a 2xx status the response is returned with its Body guarded: a read that
// sees no byte for IdleTimeout fails with ErrStreamInterrupted, and cancelling
// ctx closes the body at once so a blocked read returns ErrCanceled. The
// caller must close the Body. Every error returned is an *Error.
func Send(ctx context.Context, cfg HTTPConfig, build func(ctx context.Context) (*http.Request, error)) (*http.Response, error) {
	policy := cfg.Retry.WithDefaults()
	client := cfg.Client
	if client == nil {
		client = defaultHTTPClient
	}
	for attempt := 1; ; attempt++ {
		resp, err := sendOnce(ctx, cfg, client, build)
		if err == nil {
			resp.Body = newWatchedBody(ctx, cfg.Provider, resp.Body, policy.IdleTimeout, requestID(resp.Header))
			return resp, nil
		}
		if !err.Retryable() || attempt >= policy.MaxAttempts {
			return nil, err
		}
		d, ok := policy.wait(attempt, err)
		if !ok {
			return nil, err // the provider wants longer than we wait; caller reschedules
		}
		if policy.OnRetry != nil {
			policy.OnRetry(attempt, err, d)
		}
		if serr := policy.sleep(ctx, d); serr != nil {
			return nil, canceled(cfg.Provider, ctx)
		}
	}
}

// sendOnce makes one attempt. It returns a 2xx response or an *Error.
func sendOnce(ctx context.Context, cfg HTTPConfig, client *http.Client, build func(context.Context) (*http.Request, error)) (*http.Response, *Error) {
	if ctx.Err() != nil {
		return nil, canceled(cfg.Provider, ctx)
	}
	req, err := build(ctx)
	if err != nil {
		if le, ok := errors.AsType[*Error](err); ok {
			return nil, le // already classified (a credential the build could not get)
		}
		return nil, &Error{Kind: ErrInvalidRequest, Provider: cfg.Provider, Message: "building the request: " + err.Error(), Err: err}
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, canceled(cfg.Provider, ctx)
		}
		return nil, &Error{Kind: ErrTransport, Provider: cfg.Provider, Err: err}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	if rerr != nil && ctx.Err() != nil {
		return nil, canceled(cfg.Provider, ctx)
	}
	return nil, classifyResponse(cfg, resp, body)
}

func classifyResponse(cfg HTTPConfig, resp *http.Response, body []byte) *Error {
	var e *Error
	if cfg.Classify != nil {
		e = cfg.Classify(resp.StatusCode, resp.Header, body)
	}
	if e == nil {
		e = ErrorFromStatus(resp.StatusCode, body)
	}
	if e.Provider == "" {
		e.Provider = cfg.Provider
	}
	if e.Status == 0 {
		e.Status = resp.StatusCode
	}
	if e.RequestID == "" {
		e.RequestID = requestID(resp.Header)
	}
	if e.RetryAfter == 0 {
		e.RetryAfter = ParseRetryAfter(resp.Header, time.Now())
	}
	return e
}

// ErrorFromStatus builds the fallback error for a response whose body is not
// a provider error document (an HTML page from a proxy, an empty body): the
// kind from ClassifyStatus and a one-line excerpt of the body as message.
func ErrorFromStatus(status int, body []byte) *Error {
	msg := BodyExcerpt(body)
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &Error{Kind: ClassifyStatus(status), Status: status, Message: msg}
}

func requestID(h http.Header) string {
	for _, k := range RequestIDHeaders {
		if v := h.Get(k); v != "" {
			return v
		}
	}
	return ""
}

func canceled(provider string, ctx context.Context) *Error {
	err := context.Cause(ctx)
	if err == nil {
		err = context.Canceled
	}
	return &Error{Kind: ErrCanceled, Provider: provider, Err: err}
}

// watchedBody guards a response body with the idle watchdog and ctx.
type watchedBody struct {
	ctx       context.Context
	provider  string
	requestID string
	idle      time.Duration
	body      io.ReadCloser
	timer     *time.Timer // closes body after idle without a byte; nil when idle is 0
	stopCtx   func() bool // unregisters the ctx watcher
	expired   chan struct{}
	expire    sync.Once
}

func newWatchedBody(ctx context.Context, provider string, body io.ReadCloser, idle time.Duration, reqID string) *watchedBody {
	w := &watchedBody{ctx: ctx, provider: provider, requestID: reqID, idle: idle, body: body, expired: make(chan struct{})}
	if idle > 0 {
		w.timer = time.AfterFunc(idle, func() {
			w.expire.Do(func() { close(w.expired) })
			_ = body.Close()
		})
	}
	w.stopCtx = context.AfterFunc(ctx, func() { _ = body.Close() })
	return w
}

// Read reads from the body, restarting the idle timer on every byte.
func (w *watchedBody) Read(p []byte) (int, error) {
	n, err := w.body.Read(p)
	if n > 0 && w.timer != nil {
		w.timer.Reset(w.idle)
	}
	if err == nil || errors.Is(err, io.EOF) {
		return n, err
	}
	return n, w.readError(err)
}

func (w *watchedBody) readError(err error) *Error {
	if w.ctx.Err() != nil {
		e := canceled(w.provider, w.ctx)
		e.RequestID = w.requestID
		return e
	}
	select {
	case <-w.expired:
		return &Error{Kind: ErrStreamInterrupted, Provider: w.provider, RequestID: w.requestID,
			Message: fmt.Sprintf("no data from the provider for %s (idle timeout); the stream was abandoned", w.idle), Err: err}
	default:
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e
	}
	return &Error{Kind: ErrStreamInterrupted, Provider: w.provider, RequestID: w.requestID,
		Message: "the connection broke while reading the response: " + err.Error(), Err: err}
}

// Close stops the watchers and closes the body.
func (w *watchedBody) Close() error {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.stopCtx()
	return w.body.Close()
}
