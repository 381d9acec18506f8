package models_test

import (
	"context"
	"errors"
	"iter"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/agent"
	"github.com/agentfleet/agentfleet/fleet/models"
	"github.com/agentfleet/agentfleet/internal/testenv"
	"github.com/agentfleet/agentfleet/llm"
)

func TestSelect(t *testing.T) {
	providers := map[string]models.ProviderConfig{"anthropic": {DefaultModel: "own",
		Choices: map[string]models.ProviderConfig{"bedrock": {Region: "us-west-2"}, "vertex": {Provider: "vertex", Project: "p"}}}}
	for _, choice := range []string{"", "anthropic"} {
		if pc, err := models.Select(providers, "anthropic", choice); err != nil || pc.DefaultModel != "own" {
			t.Errorf("choice %q: %+v, %v; want the profile's own", choice, pc, err)
		}
	}
	pc, err := models.Select(providers, "anthropic", "bedrock")
	if err != nil || pc.Provider != "bedrock" || pc.Region != "us-west-2" {
		t.Errorf("bedrock: %+v, %v; want the choice, named after its key", pc, err)
	}
	_, err = models.Select(providers, "anthropic", "azure")
	if err == nil || !strings.Contains(err.Error(), "it has anthropic, bedrock, vertex") {
		t.Errorf("a missing choice: %v; want an error listing the names there are", err)
	}
}

// heldClient answers once release is closed, counting the calls in flight.
type heldClient struct {
	release       chan struct{}
	inFlight, max atomic.Int32
	err           error
}

func (c *heldClient) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	n := c.inFlight.Add(1)
	defer c.inFlight.Add(-1)
	for m := c.max.Load(); n > m && !c.max.CompareAndSwap(m, n); m = c.max.Load() {
	}
	select {
	case <-c.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if c.err != nil {
		return nil, c.err
	}
	return &llm.Response{Model: req.Model}, nil
}

func (c *heldClient) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		resp, err := c.Complete(ctx, req)
		yield(llm.StreamEvent{Response: resp}, err)
	}
}

func pool(inner llm.Client, concurrency int, observe func(string, string, time.Duration, *llm.Response, error)) *models.Pool {
	return models.NewPool(models.PoolConfig{
		Providers:   map[string]models.ProviderConfig{"anthropic": {FallbackModel: "small"}},
		Concurrency: func(string) int { return concurrency },
		NewClient:   func(string, models.ProviderConfig, llm.RetryPolicy) (llm.Client, error) { return inner, nil },
		Observe:     observe,
	})
}

// The gate lets at most Concurrency calls reach the provider at once, and
// every call is observed with its provider and model.
func TestPoolBoundsConcurrentCalls(t *testing.T) {
	inner := &heldClient{release: make(chan struct{})}
	var observed atomic.Int32
	p := pool(inner, 2, func(provider, model string, _ time.Duration, _ *llm.Response, err error) {
		if provider == "anthropic" && model == "m" && err == nil {
			observed.Add(1)
		}
	})
	c, err := p.Client("anthropic", "")
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := p.Client("anthropic", ""); again != c {
		t.Error("a second Client call built another client")
	}
	done := make(chan error, 5)
	for range 5 {
		go func() { _, err := c.Complete(context.Background(), llm.Request{Model: "m"}); done <- err }()
	}
	testenv.Eventually(t, 10*time.Second, "two calls in flight", func() bool { return inner.inFlight.Load() == 2 })
	close(inner.release)
	for range 5 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if m := inner.max.Load(); m != 2 {
		t.Errorf("at most %d calls were in flight, want 2", m)
	}
	if n := observed.Load(); n != 5 {
		t.Errorf("observed %d calls, want 5", n)
	}
}

// A rate limit with a retry-after holds the provider's next call until it
// has passed; a call whose context ends during the pause gives up.
func TestPoolPausesAfterRetryAfter(t *testing.T) {
	inner := &heldClient{release: make(chan struct{})}
	close(inner.release)
	c, err := pool(inner, 4, nil).Client("anthropic", "")
	if err != nil {
		t.Fatal(err)
	}
	inner.err = &llm.Error{Kind: llm.ErrRateLimited, Provider: "anthropic", RetryAfter: 300 * time.Millisecond}
	if _, err := c.Complete(context.Background(), llm.Request{Model: "m"}); llm.KindOf(err) != llm.ErrRateLimited {
		t.Fatalf("first call: %v, want the rate limit", err)
	}
	short, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := c.Complete(short, llm.Request{Model: "m"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a call whose context ends during the pause: %v, want its context's error", err)
	}
	inner.err = nil
	start := time.Now()
	if _, err := c.Complete(context.Background(), llm.Request{Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 200*time.Millisecond {
		t.Errorf("the call after a 300 ms retry-after went out after %s", waited)
	}
}

// overloaded answers every model but the fallback with an overload.
type overloaded struct{ heldClient }

func (c *overloaded) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	if req.Model != "small" {
		return nil, &llm.Error{Kind: llm.ErrOverloaded, Provider: "anthropic", Message: "busy"}
	}
	return &llm.Response{Model: req.Model}, nil
}

// The provider's fallback model answers for an overloaded one, and the
// switch reaches the notifier of the call's context.
func TestPoolFallbackNotifiesTheSession(t *testing.T) {
	c, err := pool(&overloaded{}, 4, nil).Client("anthropic", "")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []agent.EventKind
	ctx := models.WithNotifier(context.Background(), func(kind agent.EventKind, text string) { kinds = append(kinds, kind) })
	resp, err := c.Complete(ctx, llm.Request{Model: "big"})
	if err != nil || resp.Model != "small" {
		t.Fatalf("answer %+v, %v; want the fallback model's", resp, err)
	}
	if len(kinds) != 1 || kinds[0] != agent.EventModelFallback {
		t.Errorf("notified %v, want one %s", kinds, agent.EventModelFallback)
	}
}
