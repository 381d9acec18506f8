package llm

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{"fractional seconds", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond},
		{"http date", map[string]string{"Retry-After": now.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{"http date in the past", map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"milliseconds", map[string]string{"retry-after-ms": "250"}, 250 * time.Millisecond},
		{"milliseconds win over seconds", map[string]string{"retry-after-ms": "250", "Retry-After": "1"}, 250 * time.Millisecond},
		{"bad milliseconds fall back to seconds", map[string]string{"retry-after-ms": "soon", "Retry-After": "2"}, 2 * time.Second},
		{"garbage", map[string]string{"Retry-After": "whenever"}, 0},
		{"negative", map[string]string{"Retry-After": "-3"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tt.header {
				h.Set(k, v)
			}
			if got := ParseRetryAfter(h, now); got != tt.want {
				t.Errorf("ParseRetryAfter = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestClassifyStatus(t *testing.T) {
	tests := map[int]ErrorKind{
		400: ErrInvalidRequest, 401: ErrAuthentication, 402: ErrQuota, 403: ErrPermission, 404: ErrInvalidRequest,
		408: ErrServer, 409: ErrServer, 413: ErrContextLength, 422: ErrInvalidRequest, 429: ErrRateLimited,
		500: ErrServer, 502: ErrServer, 503: ErrOverloaded, 504: ErrServer, 529: ErrOverloaded, 418: ErrInvalidRequest,
		302: ErrInvalidResponse,
	}
	for status, want := range tests {
		if got := ClassifyStatus(status); got != want {
			t.Errorf("ClassifyStatus(%d) = %s, want %s", status, got, want)
		}
	}
}

// TestRetryableStatuses checks the statuses the policy retries: 408, 409,
// 429, 5xx and 529, and that nothing else is.
func TestRetryableStatuses(t *testing.T) {
	for _, s := range []int{408, 409, 429, 500, 502, 503, 504, 529} {
		if e := (&Error{Kind: ClassifyStatus(s)}); !e.Retryable() {
			t.Errorf("status %d (%s) is not retryable", s, e.Kind)
		}
	}
	for _, s := range []int{400, 401, 402, 403, 404, 413, 422} {
		if e := (&Error{Kind: ClassifyStatus(s)}); e.Retryable() {
			t.Errorf("status %d (%s) is retryable", s, e.Kind)
		}
	}
}

func TestRetryPolicyDefaultsAndValidate(t *testing.T) {
	p := RetryPolicy{}.WithDefaults()
	if p.MaxAttempts != DefaultMaxAttempts || p.BaseDelay != DefaultBaseDelay || p.MaxDelay != DefaultMaxDelay ||
		p.MaxRetryAfter != DefaultMaxRetryAfter || p.IdleTimeout != DefaultIdleTimeout {
		t.Fatalf("WithDefaults = %+v", p)
	}
	if err := (RetryPolicy{}).Validate(); err != nil {
		t.Fatalf("zero policy invalid: %v", err)
	}
	bad := []struct {
		p     RetryPolicy
		field string
	}{
		{RetryPolicy{MaxAttempts: -1}, "MaxAttempts"},
		{RetryPolicy{BaseDelay: -time.Second}, "BaseDelay"},
		{RetryPolicy{MaxDelay: -time.Second}, "MaxDelay"},
		{RetryPolicy{BaseDelay: time.Minute, MaxDelay: time.Second}, "BaseDelay"},
		{RetryPolicy{MaxRetryAfter: -1}, "MaxRetryAfter"},
		{RetryPolicy{IdleTimeout: -1}, "IdleTimeout"},
	}
	for _, b := range bad {
		err := b.p.Validate()
		if err == nil || !strings.Contains(err.Error(), b.field) {
			t.Errorf("Validate(%+v) = %v, want an error naming %s", b.p, err, b.field)
		}
	}
}

func TestBackoffGrowsWithJitterAndCap(t *testing.T) {
	p := RetryPolicy{BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}.WithDefaults()
	for attempt, full := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 5: time.Second, 9: time.Second} {
		for range 50 {
			d := p.backoff(attempt)
			if d < full/2 || d > full {
				t.Fatalf("backoff(%d) = %s, want within [%s, %s]", attempt, d, full/2, full)
			}
		}
	}
}
