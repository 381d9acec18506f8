package llm

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recordedSleeps is an injected Sleep that returns at once and records the
// waits asked for.
type recordedSleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (r *recordedSleeps) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.waits = append(r.waits, d)
	r.mu.Unlock()
	return ctx.Err()
}

func (r *recordedSleeps) all() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.waits...)
}

// scripted answers request i with responses[i] (the last one repeats).
type scripted struct {
	calls     atomic.Int64
	responses []func(w http.ResponseWriter)
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := int(s.calls.Add(1)) - 1
	s.responses[min(i, len(s.responses)-1)](w)
}

func status(code int, headers ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"error":"scripted"}`)
	}
}

func ok(w http.ResponseWriter) { _, _ = io.WriteString(w, "fine") }

func abort(http.ResponseWriter) { panic(http.ErrAbortHandler) }

func testSend(t *testing.T, h http.Handler, policy RetryPolicy, classify func(int, http.Header, []byte) *Error) (*http.Response, *recordedSleeps, error) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	sleeps := &recordedSleeps{}
	policy.Sleep = sleeps.sleep
	cfg := HTTPConfig{Provider: "test", Retry: policy, Classify: classify}
	resp, err := Send(context.Background(), cfg, func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("{}"))
	})
	if resp != nil {
		t.Cleanup(func() { _ = resp.Body.Close() })
	}
	return resp, sleeps, err
}

func TestSendRetriesTransientFailures(t *testing.T) {
	h := &scripted{responses: []func(http.ResponseWriter){status(500), abort, status(529), status(408), ok}}
	resp, sleeps, err := testSend(t, h, RetryPolicy{MaxAttempts: 5, BaseDelay: 100 * time.Millisecond, MaxDelay: time.Second}, nil)
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "fine" || h.calls.Load() != 5 {
		t.Fatalf("body %q after %d calls, want fine after 5", body, h.calls.Load())
	}
	waits := sleeps.all()
	if len(waits) != 4 {
		t.Fatalf("waits = %v, want 4", waits)
	}
	for i, ms := range []int{100, 200, 400, 800} {
		full := time.Duration(ms) * time.Millisecond
		if waits[i] < full/2 || waits[i] > full {
			t.Errorf("wait %d = %s, want within [%s, %s]", i, waits[i], full/2, full)
		}
	}
}

func TestSendGivesUpAfterMaxAttempts(t *testing.T) {
	h := &scripted{responses: []func(http.ResponseWriter){status(503, "x-request-id", "req_9")}}
	_, _, err := testSend(t, h, RetryPolicy{MaxAttempts: 3}, nil)
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrOverloaded || e.Status != 503 || e.RequestID != "req_9" || e.Provider != "test" {
		t.Fatalf("err = %#v, want overloaded 503 with request id", err)
	}
	if h.calls.Load() != 3 {
		t.Fatalf("calls = %d, want 3", h.calls.Load())
	}
}

func TestSendTransportErrorKind(t *testing.T) {
	_, _, err := testSend(t, &scripted{responses: []func(http.ResponseWriter){abort}}, RetryPolicy{MaxAttempts: 2}, nil)
	if KindOf(err) != ErrTransport {
		t.Fatalf("err = %v, want transport", err)
	}
}

// TestSendHonoursRetryAfter covers each way a provider asks for a wait.
func TestSendHonoursRetryAfter(t *testing.T) {
	date := time.Now().Add(20 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name     string
		headers  []string
		classify func(int, http.Header, []byte) *Error
		min, max time.Duration
	}{
		{"seconds", []string{"Retry-After", "3"}, nil, 3 * time.Second, 3 * time.Second},
		{"http date", []string{"Retry-After", date}, nil, 15 * time.Second, 20 * time.Second},
		{"milliseconds", []string{"retry-after-ms", "1500"}, nil, 1500 * time.Millisecond, 1500 * time.Millisecond},
		{"from the body", nil, func(int, http.Header, []byte) *Error {
			return &Error{Kind: ErrRateLimited, RetryAfter: 7 * time.Second}
		}, 7 * time.Second, 7 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &scripted{responses: []func(http.ResponseWriter){status(429, tt.headers...), ok}}
			_, sleeps, err := testSend(t, h, RetryPolicy{}, tt.classify)
			if err != nil {
				t.Fatalf("Send: %v", err)
			}
			waits := sleeps.all()
			if len(waits) != 1 || waits[0] < tt.min || waits[0] > tt.max {
				t.Fatalf("waits = %v, want one within [%s, %s]", waits, tt.min, tt.max)
			}
		})
	}
}

// TestSendRetryAfterBeyondCap returns the rate-limit error at once so the
// caller can reschedule.
func TestSendRetryAfterBeyondCap(t *testing.T) {
	h := &scripted{responses: []func(http.ResponseWriter){status(429, "Retry-After", "120"), ok}}
	_, sleeps, err := testSend(t, h, RetryPolicy{MaxRetryAfter: time.Minute}, nil)
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrRateLimited || e.RetryAfter != 2*time.Minute {
		t.Fatalf("err = %v, want rate limited with RetryAfter 2m", err)
	}
	if h.calls.Load() != 1 || len(sleeps.all()) != 0 {
		t.Fatalf("calls %d, waits %v; want 1 call and no wait", h.calls.Load(), sleeps.all())
	}
}

// TestSendNeverRetries covers every kind the policy must not retry.
func TestSendNeverRetries(t *testing.T) {
	for _, kind := range []ErrorKind{ErrAuthentication, ErrPermission, ErrQuota, ErrInvalidRequest, ErrContextLength, ErrInvalidResponse} {
		t.Run(string(kind), func(t *testing.T) {
			h := &scripted{responses: []func(http.ResponseWriter){status(429, "Retry-After", "1")}}
			_, sleeps, err := testSend(t, h, RetryPolicy{}, func(int, http.Header, []byte) *Error { return &Error{Kind: kind} })
			if KindOf(err) != kind || h.calls.Load() != 1 || len(sleeps.all()) != 0 {
				t.Fatalf("err %v after %d calls and waits %v; want %s after 1 call", err, h.calls.Load(), sleeps.all(), kind)
			}
		})
	}
}

func TestSendHTMLErrorPage(t *testing.T) {
	page := "<html><head><title>502 Bad Gateway</title><style>body{x}</style></head><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>"
	h := &scripted{responses: []func(http.ResponseWriter){func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, page)
	}}}
	_, _, err := testSend(t, h, RetryPolicy{MaxAttempts: 1}, nil)
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrServer || e.Status != 502 {
		t.Fatalf("err = %v, want server 502", err)
	}
	if strings.Contains(e.Message, "<") || !strings.Contains(e.Message, "502 Bad Gateway") || strings.Contains(e.Message, "body{x}") {
		t.Fatalf("message %q should be the page's text without tags or styles", e.Message)
	}
}

func TestSendCanceledWhileWaiting(t *testing.T) {
	srv := httptest.NewServer(&scripted{responses: []func(http.ResponseWriter){status(500)}})
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	policy := RetryPolicy{Sleep: func(ctx context.Context, d time.Duration) error {
		cancel()
		<-ctx.Done()
		return ctx.Err()
	}}
	_, err := Send(ctx, HTTPConfig{Provider: "test", Retry: policy}, func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	})
	if KindOf(err) != ErrCanceled || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want canceled wrapping context.Canceled", err)
	}
}

func TestSendBuildErrorIsInvalidRequest(t *testing.T) {
	_, err := Send(context.Background(), HTTPConfig{Provider: "test"}, func(context.Context) (*http.Request, error) {
		return nil, errors.New("no model")
	})
	if KindOf(err) != ErrInvalidRequest || !strings.Contains(err.Error(), "no model") {
		t.Fatalf("err = %v", err)
	}
}

// stallingHandler writes one line then holds the response open until the
// test ends.
func stallingHandler(release <-chan struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "data: first\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
}

func TestIdleWatchdogEndsStalledBody(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(stallingHandler(release))
	defer srv.Close()
	defer close(release)
	resp, err := Send(context.Background(), HTTPConfig{Provider: "test", Retry: RetryPolicy{IdleTimeout: 50 * time.Millisecond}},
		func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	_, err = io.ReadAll(resp.Body)
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrStreamInterrupted || !strings.Contains(e.Message, "idle") {
		t.Fatalf("read err = %v, want stream interrupted by the idle timeout", err)
	}
}

func TestCancelEndsStalledBody(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(stallingHandler(release))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := Send(ctx, HTTPConfig{Provider: "test"},
		func(ctx context.Context) (*http.Request, error) {
			return http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	sr := NewSSEReader(resp.Body)
	if ev, err := sr.Next(); err != nil || ev.Data != "first" {
		t.Fatalf("first event %+v, %v", ev, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := sr.Next()
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if KindOf(err) != ErrCanceled {
			t.Fatalf("err = %v, want canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the read did not end after cancel")
	}
}
