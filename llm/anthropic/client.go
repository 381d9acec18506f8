package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"iter"
	"net/http"

	"github.com/agentfleet/agentfleet/llm"
)

// Client speaks the Anthropic Messages API. It is safe for concurrent use.
type Client struct {
	cfg  Config
	http llm.HTTPConfig
}

var _ llm.Client = (*Client)(nil)

// New returns a client for cfg after applying defaults and validating it.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	return &Client{cfg: cfg, http: llm.HTTPConfig{
		Provider: providerName, Client: cfg.HTTPClient, Retry: cfg.Retry, Classify: classify,
	}}, nil
}

// Complete sends req and returns the whole answer.
func (c *Client) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	resp, err := c.send(ctx, req, false)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, llm.ReadError(providerName, err)
	}
	out, err := parseResponse(body)
	if err != nil {
		return nil, llm.WithRequestID(err, resp.Header)
	}
	return out, nil
}

// Stream sends req with stream: true and yields events as they arrive,
// ending with EventFinish or an error.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		resp, err := c.send(ctx, req, true)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		defer resp.Body.Close()
		if err := llm.CheckEventStream(providerName, resp); err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		decodeStream(resp.Body, func(ev llm.StreamEvent, err error) bool {
			return yield(ev, llm.WithRequestID(err, resp.Header))
		})
	}
}

// decodeStream reads the SSE body to message_stop, yielding unified events.
func decodeStream(body io.Reader, yield func(llm.StreamEvent, error) bool) {
	sse := llm.NewSSEReader(body)
	d := newStreamDecoder()
	for {
		ev, err := sse.Next()
		if errors.Is(err, io.EOF) {
			yield(llm.StreamEvent{}, &llm.Error{Kind: llm.ErrStreamInterrupted, Provider: providerName,
				Message: "the stream ended before message_stop; the answer is incomplete"})
			return
		}
		if err != nil {
			yield(llm.StreamEvent{}, llm.ReadError(providerName, err))
			return
		}
		done, err := d.feed(ev.Event, ev.Data)
		if !yieldAll(d.out, yield) {
			return
		}
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		if done {
			resp := d.finish()
			if yieldAll(d.out, yield) {
				yield(llm.StreamEvent{Kind: llm.EventFinish, Response: resp}, nil)
			}
			return
		}
	}
}

func yieldAll(events []llm.StreamEvent, yield func(llm.StreamEvent, error) bool) bool {
	for _, e := range events {
		if !yield(e, nil) {
			return false
		}
	}
	return true
}

// send builds the body once and posts it, retrying per the policy.
func (c *Client) send(ctx context.Context, req llm.Request, stream bool) (*http.Response, error) {
	w, err := buildRequest(req, stream)
	if err != nil {
		return nil, err
	}
	beta, err := betaHeader(req.ProviderOptions)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(w)
	if err != nil {
		return nil, invalidRequest("encoding the request: " + err.Error())
	}
	url := c.cfg.BaseURL + "/v1/messages"
	return llm.Send(ctx, c.http, func(ctx context.Context) (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("x-api-key", c.cfg.APIKey)
		r.Header.Set("anthropic-version", APIVersion)
		if beta != "" {
			r.Header.Set("anthropic-beta", beta)
		}
		if stream {
			r.Header.Set("Accept", "text/event-stream")
		} else {
			r.Header.Set("Accept", "application/json")
		}
		return r, nil
	})
}
