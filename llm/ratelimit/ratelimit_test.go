package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/llm/ratelimit"
	"github.com/agentfleet/agentfleet/llm/sim"
	"github.com/agentfleet/agentfleet/queue"
	"github.com/agentfleet/agentfleet/queue/natstest"
)

var key = ratelimit.Key{Provider: "anthropic", Credential: "default", Model: "claude-sonnet-4-5"}

// worker is one member of the fleet: its own NATS connection, limiter and
// Anthropic client whose HTTP requests go through the limiter.
type worker struct {
	lim    *ratelimit.Limiter
	client llm.Client
}

func startWorkers(t *testing.T, n int, rules ratelimit.Rules, srv *sim.Server) []worker {
	t.Helper()
	ns := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws := make([]worker, n)
	for i := range ws {
		q, err := queue.Open(ctx, ns.Connect(t), queue.Config{})
		if err != nil {
			t.Fatal(err)
		}
		kv, err := q.KeyValue(ctx, "ratelimits", "test")
		if err != nil {
			t.Fatal(err)
		}
		if ws[i].lim, err = ratelimit.New(kv, rules, fmt.Sprintf("w%d", i)); err != nil {
			t.Fatal(err)
		}
		retry := llm.RetryPolicy{MaxAttempts: 1}
		ws[i].client, err = anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "k", Retry: retry,
			HTTPClient: &http.Client{Transport: ws[i].lim.Transport(nil)}})
		if err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func call(ctx context.Context, w worker, notify func(time.Duration, string)) error {
	ctx = ratelimit.WithKey(ctx, key, notify)
	_, err := w.client.Complete(ctx, llm.Request{Model: key.Model, Messages: []llm.Message{llm.UserMessage("hi")}})
	return err
}

// hammerAll sends total requests from every worker's goroutines at once.
func hammerAll(t *testing.T, ws []worker, total int, notify func(time.Duration, string)) (ok, limited int) {
	t.Helper()
	var mu sync.Mutex
	var wg sync.WaitGroup
	jobs := make(chan struct{}, total)
	for range total {
		jobs <- struct{}{}
	}
	close(jobs)
	for _, w := range ws {
		for range 4 {
			wg.Go(func() {
				for range jobs {
					err := call(context.Background(), w, notify)
					mu.Lock()
					switch {
					case err == nil:
						ok++
					case llm.KindOf(err) == llm.ErrRateLimited:
						limited++
					default:
						t.Errorf("call: %v", err)
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	return ok, limited
}

// TestSharedLimitThreeWorkers: three workers on three NATS connections
// share one limit of 1200 requests a minute against a provider enforcing
// the same: no request is refused, requests waited, and the same load
// without the limiter is refused.
func TestSharedLimitThreeWorkers(t *testing.T) {
	const rpm, total = 1200, 90
	srv := sim.NewServer()
	defer srv.Close()
	srv.SetDefault(sim.Text("ok"))
	enforced := srv.EnforceRateLimit(rpm, 2*time.Second)
	ws := startWorkers(t, 3, ratelimit.Rules{{Provider: "anthropic", Limits: ratelimit.Limits{RequestsPerMinute: rpm}}}, srv)
	var waits sync.Map
	ok, limited := hammerAll(t, ws, total, func(d time.Duration, reason string) { waits.Store(reason, d) })
	st := enforced.Stats()
	if ok != total || limited != 0 || st.Limited != 0 {
		t.Fatalf("with the shared limiter: %d ok, %d refused (provider counted %d); want all %d ok", ok, limited, st.Limited, total)
	}
	if _, waited := waits.Load("requests per minute"); !waited {
		t.Fatal("no request reported waiting for the requests-per-minute limit")
	}
	t.Logf("%d requests in %s at %g rpm allowed", st.Admitted, st.Last.Sub(st.First).Round(time.Millisecond), float64(rpm))

	// The same load straight at the provider, without the limiter.
	srv.EnforceRateLimit(rpm, 2*time.Second) // a fresh bucket
	plain, err := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "k", Retry: llm.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, limited = hammerAll(t, []worker{{client: plain}, {client: plain}, {client: plain}}, total, nil)
	if limited == 0 {
		t.Fatal("without the limiter the provider refused nothing: the test load does not exceed the limit")
	}
}

// TestOne429SlowsEveryWorker: a 429 with retry-after 2 s seen by one
// worker pauses the key for the others too.
func TestOne429SlowsEveryWorker(t *testing.T) {
	srv := sim.NewServer()
	defer srv.Close()
	ws := startWorkers(t, 3, ratelimit.Rules{{Provider: "anthropic", Limits: ratelimit.Limits{RequestsPerMinute: 6000}}}, srv)
	srv.Enqueue(sim.Reply{Failure: &sim.Failure{Kind: llm.ErrRateLimited, RetryAfter: "2"}})
	if err := call(context.Background(), ws[0], nil); llm.KindOf(err) != llm.ErrRateLimited {
		t.Fatalf("first call: %v, want the scripted 429", err)
	}
	var wg sync.WaitGroup
	for i, w := range ws[1:] {
		wg.Go(func() {
			p, err := w.lim.Acquire(context.Background(), key)
			if err != nil {
				t.Error(err)
				return
			}
			p.Release(context.Background())
			if p.Waited < time.Second || p.Reason != "the provider asked to retry later" {
				t.Errorf("worker %d waited %s (%q), want about 2 s for the retry-after", i+1, p.Waited, p.Reason)
			}
		})
	}
	wg.Wait()
}

// TestConcurrencyAndHeaders: concurrent requests are capped fleet-wide, and
// a lower limit reported by the provider's headers lowers the shared one.
func TestConcurrencyAndHeaders(t *testing.T) {
	srv := sim.NewServer()
	defer srv.Close()
	ws := startWorkers(t, 2, ratelimit.Rules{{Provider: "anthropic", Limits: ratelimit.Limits{ConcurrentRequests: 1, RequestsPerMinute: 6000}}}, srv)
	ctx := context.Background()
	p, err := ws[0].lim.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 600*time.Millisecond)
	defer cancel()
	if _, err := ws[1].lim.Acquire(short, key); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second concurrent request: %v, want to wait past the deadline", err)
	}
	p.Release(ctx)
	p2, err := ws[1].lim.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	p2.Release(ctx)

	h := http.Header{}
	h.Set("anthropic-ratelimit-requests-limit", "60")
	h.Set("anthropic-ratelimit-requests-remaining", "0")
	if err := ws[0].lim.Observe(ctx, key, 200, h); err != nil {
		t.Fatal(err)
	}
	p3, err := ws[1].lim.Acquire(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	p3.Release(ctx)
	if p3.Waited < 500*time.Millisecond || p3.Reason != "requests per minute" {
		t.Fatalf("after the provider said 60 rpm and none left: waited %s (%q), want about a second", p3.Waited, p3.Reason)
	}
}

// TestRuleValidation: a rule with no limit (a rate limit of zero), a
// negative limit or no provider is refused, naming the field.
func TestRuleValidation(t *testing.T) {
	for _, c := range []struct {
		rule ratelimit.Rule
		want string
	}{
		{ratelimit.Rule{Provider: "anthropic"}, "rate_limits[0] sets no limit"},
		{ratelimit.Rule{Provider: "anthropic", Limits: ratelimit.Limits{RequestsPerMinute: -5}}, "rate_limits[0].requests_per_minute must be > 0"},
		{ratelimit.Rule{Limits: ratelimit.Limits{RequestsPerMinute: 5}}, "rate_limits[0].provider is required"},
	} {
		if _, err := ratelimit.New(nil, ratelimit.Rules{c.rule}, "w"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want %q", c.rule, err, c.want)
		}
	}
	rs := ratelimit.Rules{
		{Provider: "anthropic", Limits: ratelimit.Limits{RequestsPerMinute: 100}},
		{Provider: "anthropic", Model: "claude-opus-4-1", Limits: ratelimit.Limits{RequestsPerMinute: 10}},
		{Provider: "anthropic", Credential: "team-b", Limits: ratelimit.Limits{RequestsPerMinute: 7}},
	}
	for k, want := range map[ratelimit.Key]float64{
		{Provider: "anthropic", Credential: "default", Model: "claude-opus-4-1"}:   10,
		{Provider: "anthropic", Credential: "default", Model: "claude-sonnet-4-5"}: 100,
		{Provider: "anthropic", Credential: "team-b", Model: "claude-opus-4-1"}:    7,
	} {
		if l, ok := rs.For(k); !ok || l.RequestsPerMinute != want {
			t.Errorf("For(%v) = %+v %v, want %g rpm", k, l, ok, want)
		}
	}
	if _, ok := rs.For(ratelimit.Key{Provider: "openai", Credential: "default", Model: "gpt-5"}); ok {
		t.Error("an openai key is covered by anthropic rules")
	}
}

// TestBucketUnreachableLetsRequestsThrough: a limiter whose NATS
// connection is gone does not fail the calls it limits.
func TestBucketUnreachableLetsRequestsThrough(t *testing.T) {
	srv := sim.NewServer()
	defer srv.Close()
	srv.SetDefault(sim.Text("ok"))
	ns := natstest.Start(t)
	nc := ns.Connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := queue.Open(ctx, nc, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	kv, err := q.KeyValue(ctx, "ratelimits", "test")
	if err != nil {
		t.Fatal(err)
	}
	lim, err := ratelimit.New(kv, ratelimit.Rules{{Provider: "anthropic", Limits: ratelimit.Limits{RequestsPerMinute: 60}}}, "w")
	if err != nil {
		t.Fatal(err)
	}
	client, err := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "k", Retry: llm.RetryPolicy{MaxAttempts: 1},
		HTTPClient: &http.Client{Transport: lim.Transport(nil)}})
	if err != nil {
		t.Fatal(err)
	}
	nc.Close()
	if err := call(ctx, worker{lim: lim, client: client}, nil); err != nil {
		t.Fatalf("a call with the bucket unreachable: %v", err)
	}
}
