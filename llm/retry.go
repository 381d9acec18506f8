package llm

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy is the one retry policy every adapter uses. The zero value means
// the documented defaults; WithDefaults fills them in.
type RetryPolicy struct {
	// MaxAttempts is the total number of tries including the first.
	// Default 4; set 1 to never retry.
	MaxAttempts int
	// BaseDelay is the backoff before the first retry; it doubles each
	// attempt, with jitter. Default 500ms.
	BaseDelay time.Duration
	// MaxDelay caps one backoff. Default 30s.
	MaxDelay time.Duration
	// MaxRetryAfter is the longest provider-requested wait (Retry-After,
	// retry-after-ms, Gemini RetryInfo) that is honoured by waiting. A longer
	// request is returned at once as the rate-limit error with RetryAfter
	// set, so the caller can reschedule. Default 60s.
	MaxRetryAfter time.Duration
	// IdleTimeout ends a response body that delivers no byte for this long
	// with ErrStreamInterrupted. Default 60s.
	IdleTimeout time.Duration

	// Sleep waits between attempts; nil uses a real timer. It must return
	// ctx.Err() when ctx ends first. Tests inject one that does not sleep.
	Sleep func(ctx context.Context, d time.Duration) error
	// OnRetry, when set, is called before each wait with the attempt that
	// failed (1-based), its error and the wait chosen. Used for logging and
	// events; it must not block.
	OnRetry func(attempt int, err *Error, wait time.Duration)
}

// Default retry settings.
const (
	DefaultMaxAttempts   = 4
	DefaultBaseDelay     = 500 * time.Millisecond
	DefaultMaxDelay      = 30 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second
	DefaultIdleTimeout   = 60 * time.Second
)

// WithDefaults returns p with every zero field set to its default.
func (p RetryPolicy) WithDefaults() RetryPolicy {
	if p.MaxAttempts == 0 {
		p.MaxAttempts = DefaultMaxAttempts
	}
	if p.BaseDelay == 0 {
		p.BaseDelay = DefaultBaseDelay
	}
	if p.MaxDelay == 0 {
		p.MaxDelay = DefaultMaxDelay
	}
	if p.MaxRetryAfter == 0 {
		p.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if p.IdleTimeout == 0 {
		p.IdleTimeout = DefaultIdleTimeout
	}
	return p
}

// Validate reports the first invalid field. Zero fields are valid (they mean
// the default).
func (p RetryPolicy) Validate() error {
	switch {
	case p.MaxAttempts < 0:
		return fmt.Errorf("RetryPolicy.MaxAttempts must be >= 1 (0 means %d), got %d", DefaultMaxAttempts, p.MaxAttempts)
	case p.BaseDelay < 0:
		return fmt.Errorf("RetryPolicy.BaseDelay must be >= 0, got %s", p.BaseDelay)
	case p.MaxDelay < 0:
		return fmt.Errorf("RetryPolicy.MaxDelay must be >= 0, got %s", p.MaxDelay)
	case p.MaxDelay != 0 && p.BaseDelay > p.MaxDelay:
		return fmt.Errorf("RetryPolicy.BaseDelay (%s) must not exceed RetryPolicy.MaxDelay (%s)", p.BaseDelay, p.MaxDelay)
	case p.MaxRetryAfter < 0:
		return fmt.Errorf("RetryPolicy.MaxRetryAfter must be >= 0, got %s", p.MaxRetryAfter)
	case p.IdleTimeout < 0:
		return fmt.Errorf("RetryPolicy.IdleTimeout must be >= 0, got %s", p.IdleTimeout)
	}
	return nil
}

// backoff is the wait before retry number attempt (1-based): BaseDelay
// doubled per attempt, capped at MaxDelay, then "equal jitter": half fixed,
// half random, so retries of many clients spread out but never collapse to 0.
func (p RetryPolicy) backoff(attempt int) time.Duration {
	d := p.BaseDelay
	for i := 1; i < attempt && d < p.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, p.MaxDelay)
	if d <= 1 {
		return d
	}
	half := d / 2
	return half + rand.N(d-half)
}

// wait decides how long to wait after err before the next attempt. ok is
// false when the provider asked for a wait longer than MaxRetryAfter.
func (p RetryPolicy) wait(attempt int, err *Error) (d time.Duration, ok bool) {
	if err.RetryAfter > 0 {
		return err.RetryAfter, err.RetryAfter <= p.MaxRetryAfter
	}
	return p.backoff(attempt), true
}

func (p RetryPolicy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// ParseRetryAfter returns the wait a response asks for: retry-after-ms
// (milliseconds, OpenAI and Anthropic) when present, else Retry-After as
// seconds or as an HTTP date relative to now. It returns 0 when neither
// header is present or parses, or the date is in the past.
func ParseRetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// ClassifyStatus maps an HTTP status to the ErrorKind it means when the body
// says nothing more specific. Adapters refine it from the provider's error
// body (for example OpenAI's 429 insufficient_quota is ErrQuota).
func ClassifyStatus(status int) ErrorKind {
	switch {
	case status == http.StatusBadRequest, status == http.StatusNotFound,
		status == http.StatusUnprocessableEntity, status == http.StatusMethodNotAllowed:
		return ErrInvalidRequest
	case status == http.StatusUnauthorized:
		return ErrAuthentication
	case status == http.StatusPaymentRequired:
		return ErrQuota
	case status == http.StatusForbidden:
		return ErrPermission
	case status == http.StatusRequestTimeout, status == http.StatusConflict:
		return ErrServer // transient on the provider side; retried
	case status == http.StatusRequestEntityTooLarge:
		return ErrContextLength
	case status == http.StatusTooManyRequests:
		return ErrRateLimited
	case status == http.StatusServiceUnavailable, status == 529:
		return ErrOverloaded
	case status >= 500:
		return ErrServer
	case status >= 400:
		return ErrInvalidRequest
	}
	return ErrInvalidResponse
}
