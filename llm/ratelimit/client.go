package ratelimit

import (
	"context"
	"fmt"
	"iter"
	"time"

	"github.com/agentfleet/agentfleet/llm"
)

// Client applies a limiter to an llm.Client's calls: each call is marked
// with its key (Provider, Credential, the request's model and the
// context's tenant, WithTenant), so the
// HTTP requests it makes through a limiting transport (Lazy.HTTPClient,
// Limiter.Transport) wait for the limit; a wait is counted in Metrics and
// told to Notify; the answer's tokens are charged to the key.
type Client struct {
	Inner                llm.Client
	Limiter              *Lazy
	Metrics              *Metrics // nil: not counted
	Provider, Credential string
	// Notify, when set, is told of each wait in a sentence.
	Notify func(ctx context.Context, text string)
}

var _ llm.Client = (*Client)(nil)

func (c *Client) mark(ctx context.Context, model string) (context.Context, Key) {
	k := Key{Provider: c.Provider, Credential: c.Credential, Model: model, Tenant: TenantFrom(ctx)}
	return WithKey(ctx, k, func(waited time.Duration, reason string) {
		if c.Metrics != nil {
			c.Metrics.Waited(k, waited, reason)
		}
		if c.Notify != nil {
			c.Notify(ctx, fmt.Sprintf("waited %s for the fleet-wide rate limit of %s (%s)", waited.Round(time.Millisecond), k, reason))
		}
	}), k
}

// charge takes an answer's tokens from the key's buckets; a failed write
// only makes the limiter less exact.
func (c *Client) charge(ctx context.Context, k Key, resp *llm.Response) {
	if lim := c.Limiter.Get(); lim != nil && resp != nil {
		_ = lim.Charge(context.WithoutCancel(ctx), k, resp.Usage)
	}
}

// Complete sends req under its key.
func (c *Client) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	ctx, k := c.mark(ctx, req.Model)
	resp, err := c.Inner.Complete(ctx, req)
	c.charge(ctx, k, resp)
	return resp, err
}

// Stream sends req under its key.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		ctx, k := c.mark(ctx, req.Model)
		for ev, err := range c.Inner.Stream(ctx, req) {
			if ev.Kind == llm.EventFinish {
				c.charge(ctx, k, ev.Response)
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}
