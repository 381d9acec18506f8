package ratelimit

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// reported is what one response's headers say about a key.
type reported struct {
	limits       Limits  // the provider's limits (0: not said)
	req, in, out float64 // remaining (-1: not said)
	retryAfter   time.Duration
	rateLimited  bool
}

// readHeaders reads the Anthropic and OpenAI rate-limit headers and a
// 429's retry-after.
func readHeaders(status int, h http.Header) reported {
	r := reported{req: -1, in: -1, out: -1}
	num := func(name string) float64 {
		v, err := strconv.ParseFloat(strings.TrimSpace(h.Get(name)), 64)
		if err != nil {
			return -1
		}
		return v
	}
	pos := func(v float64) float64 { return max(v, 0) }
	// Anthropic
	r.limits.RequestsPerMinute = pos(num("anthropic-ratelimit-requests-limit"))
	r.limits.InputTokensPerMinute = pos(num("anthropic-ratelimit-input-tokens-limit"))
	r.limits.OutputTokensPerMinute = pos(num("anthropic-ratelimit-output-tokens-limit"))
	r.req, r.in, r.out = num("anthropic-ratelimit-requests-remaining"), num("anthropic-ratelimit-input-tokens-remaining"),
		num("anthropic-ratelimit-output-tokens-remaining")
	// OpenAI: requests, and tokens (input and output together: input's bucket)
	if v := num("x-ratelimit-limit-requests"); v > 0 {
		r.limits.RequestsPerMinute = v
	}
	if v := num("x-ratelimit-limit-tokens"); v > 0 {
		r.limits.InputTokensPerMinute = v
	}
	if v := num("x-ratelimit-remaining-requests"); v >= 0 {
		r.req = v
	}
	if v := num("x-ratelimit-remaining-tokens"); v >= 0 {
		r.in = v
	}
	r.rateLimited = status == http.StatusTooManyRequests
	if r.rateLimited {
		r.retryAfter = retryAfter(h)
	}
	return r
}

// retryAfter reads retry-after-ms, then retry-after (seconds or a date).
func retryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("retry-after-ms"), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return time.Until(t)
	}
	return 0
}

// Observe adjusts k's shared state from one response: the provider's
// limits and remaining counts, and a 429's pause (see the package doc).
// They describe the provider key, so a tenant's share is left as it is.
func (l *Limiter) Observe(ctx context.Context, k Key, status int, h http.Header) error {
	k = k.keyOnly()
	limits, ok := l.rules.For(k)
	if !ok {
		return nil
	}
	r := readHeaders(status, h)
	if !r.rateLimited && r.limits == (Limits{}) && r.req < 0 && r.in < 0 && r.out < 0 {
		return nil
	}
	return l.update(ctx, k, limits, func(s *state) bool {
		now := l.now()
		s.refill(now)
		before := *s
		s.Limits = s.Limits.lower(r.limits).reconcile(limits)
		lowerTo := func(v *float64, remaining float64) {
			if remaining >= 0 && remaining < *v {
				*v = remaining
			}
		}
		lowerTo(&s.Req, r.req)
		lowerTo(&s.In, r.in)
		lowerTo(&s.Out, r.out)
		if r.rateLimited {
			pause := max(r.retryAfter, MinPause)
			if until := now.Add(pause).UnixNano(); until > s.Until {
				s.Until = until
			}
			s.Req = min(s.Req, 0)
		}
		return s.Until != before.Until || s.Req != before.Req || s.In != before.In || s.Out != before.Out ||
			s.Limits != before.Limits
	})
}
