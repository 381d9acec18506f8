// Package fallback sends a model's requests to a fallback model while the
// first one is overloaded.
//
// A Client wraps the client of one profile. When a request's answer is an
// overload (llm.ErrOverloaded: Anthropic's 529, a 503), which the adapter
// returns only after its own retries (llm.RetryPolicy.MaxAttempts answers)
// were all overloaded, the same request goes to Fallback instead, and for
// Cooldown after that every request for the first model goes straight to
// the fallback, so a fleet does not spend each call's retries on a model
// that is known to be busy. The answer's Response.Model names the model
// that answered (the fallback's name when its provider does not say), so
// the agent records it on the turn; OnFallback reports each switch.
package fallback

import (
	"context"
	"iter"
	"sync"
	"time"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/pricing"
)

// DefaultCooldown is Client.Cooldown when zero.
const DefaultCooldown = 30 * time.Second

// Client is an llm.Client with a fallback model. Safe for concurrent use.
type Client struct {
	Inner    llm.Client
	Fallback string        // the model to use while the requested one is overloaded
	Cooldown time.Duration // how long an overload sends requests to Fallback (default DefaultCooldown)
	// OnFallback, when set, is called for each request sent to the
	// fallback model, with the overload that caused it (nil during the
	// cooldown).
	OnFallback func(ctx context.Context, from, to string, cause error)

	mu    sync.Mutex
	until map[string]time.Time // model -> overloaded until
}

var _ llm.Client = (*Client)(nil)

// useFallback reports whether model is in its cooldown.
func (c *Client) useFallback(model string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.Fallback != "" && model != c.Fallback && time.Now().Before(c.until[model])
}

func (c *Client) overloaded(model string) {
	cd := c.Cooldown
	if cd <= 0 {
		cd = DefaultCooldown
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.until == nil {
		c.until = map[string]time.Time{}
	}
	c.until[model] = time.Now().Add(cd)
}

func (c *Client) switchable(req llm.Request, err error) bool {
	return c.Fallback != "" && req.Model != c.Fallback && llm.KindOf(err) == llm.ErrOverloaded
}

func (c *Client) fallbackReq(ctx context.Context, req llm.Request, cause error) llm.Request {
	if c.OnFallback != nil {
		c.OnFallback(ctx, req.Model, c.Fallback, cause)
	}
	req.Model = c.Fallback
	// The fallback may allow fewer output tokens than the model asked for.
	if most, ok := pricing.MaxOutputTokens(c.Fallback); ok && req.MaxOutputTokens > most {
		req.MaxOutputTokens = most
	}
	return req
}

// named fills in the answering model when the provider did not say.
func named(resp *llm.Response, model string) *llm.Response {
	if resp != nil && resp.Model == "" {
		resp.Model = model
	}
	return resp
}

// Complete sends req, to the fallback model while req.Model is overloaded.
func (c *Client) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	if c.useFallback(req.Model) {
		req = c.fallbackReq(ctx, req, nil)
		resp, err := c.Inner.Complete(ctx, req)
		return named(resp, req.Model), err
	}
	resp, err := c.Inner.Complete(ctx, req)
	if !c.switchable(req, err) {
		return resp, err
	}
	c.overloaded(req.Model)
	req = c.fallbackReq(ctx, req, err)
	resp, err = c.Inner.Complete(ctx, req)
	return named(resp, req.Model), err
}

// Stream is Complete's streaming form. An overload before any event goes
// to the fallback; one after events were yielded is returned as it is.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		if c.useFallback(req.Model) {
			c.relay(ctx, c.fallbackReq(ctx, req, nil), yield)
			return
		}
		started := false
		for ev, err := range c.Inner.Stream(ctx, req) {
			if err != nil && !started && c.switchable(req, err) {
				c.overloaded(req.Model)
				c.relay(ctx, c.fallbackReq(ctx, req, err), yield)
				return
			}
			started = true
			if !yield(ev, err) {
				return
			}
		}
	}
}

// relay streams req from the inner client, naming the model on the
// final response.
func (c *Client) relay(ctx context.Context, req llm.Request, yield func(llm.StreamEvent, error) bool) {
	for ev, err := range c.Inner.Stream(ctx, req) {
		if ev.Kind == llm.EventFinish {
			named(ev.Response, req.Model)
		}
		if !yield(ev, err) {
			return
		}
	}
}
