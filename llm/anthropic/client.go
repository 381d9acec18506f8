package anthropic

import (
	"context"
	"errors"
	"io"
	"iter"
	"net/http"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/internal/adapterkit"
)

// Client speaks the Anthropic Messages API. It is safe for concurrent use.
type Client struct {
	kit adapterkit.Client
}

var _ llm.Client = (*Client)(nil)

// New returns a client for cfg after applying defaults and validating it.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	header := http.Header{}
	header.Set("x-api-key", cfg.APIKey)
	header.Set("anthropic-version", APIVersion)
	url := cfg.BaseURL + "/v1/messages"
	tools := &toolsCache{}
	return &Client{kit: adapterkit.Client{
		HTTP: llm.HTTPConfig{Provider: providerName, Client: cfg.HTTPClient, Retry: cfg.Retry, Classify: classify},
		Encode: func(req llm.Request, stream bool) (adapterkit.Post, error) {
			return encode(url, header, tools, req, stream)
		},
		Parse:        parseResponse,
		Decode:       decodeStream,
		ForcedAnswer: func(llm.Request) bool { return true },
	}}, nil
}

// Complete sends req and returns the whole answer.
func (c *Client) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	return c.kit.Complete(ctx, req)
}

// Stream sends req with stream: true and yields events as they arrive,
// ending with EventFinish or an error.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return c.kit.Stream(ctx, req)
}

// decodeStream reads the SSE body to message_stop, yielding unified events.
func decodeStream(body io.Reader, yield func(llm.StreamEvent, error) bool) {
	sse := llm.NewSSEReader(body)
	defer sse.Release()
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
		if !adapterkit.YieldAll(d.out, yield) {
			return
		}
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		if done {
			resp := d.finish()
			if adapterkit.YieldAll(d.out, yield) {
				yield(llm.StreamEvent{Kind: llm.EventFinish, Response: resp}, nil)
			}
			return
		}
	}
}

// encode builds the request body, its tools from the client's cache, and
// adds the anthropic-beta header the request's options ask for to the
// client's headers.
func encode(url string, header http.Header, tools *toolsCache, req llm.Request, stream bool) (adapterkit.Post, error) {
	req, err := prepareRequest(req)
	if err != nil {
		return adapterkit.Post{}, err
	}
	w, err := buildRequest(req, stream)
	if err != nil {
		return adapterkit.Post{}, err
	}
	beta, err := betaHeader(req.ProviderOptions)
	if err != nil {
		return adapterkit.Post{}, err
	}
	body, err := requestBody(w, req.Tools, tools)
	if err != nil {
		return adapterkit.Post{}, invalidRequest("encoding the request: " + err.Error())
	}
	if beta != "" {
		header = header.Clone()
		header.Set("anthropic-beta", beta)
	}
	return adapterkit.Post{URL: url, Header: header, Body: body}, nil
}
