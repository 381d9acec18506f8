package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// Client speaks the Gemini API generateContent and streamGenerateContent. It
// is safe for concurrent use.
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

// Complete calls generateContent and returns the whole answer.
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

// Stream calls streamGenerateContent?alt=sse and yields events as chunks
// arrive, ending with EventFinish or an error.
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

// decodeStream reads data-only SSE events, each a GenerateContentResponse.
// The API ends the stream by closing it after the chunk with finishReason;
// an end before that is an interrupted stream.
func decodeStream(body io.Reader, yield func(llm.StreamEvent, error) bool) {
	sse := llm.NewSSEReader(body)
	a := newAssembler()
	var chunk wireResponse
	var feedback *wirePromptFeedback
	chunks := 0
	for {
		ev, err := sse.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			yield(llm.StreamEvent{}, llm.ReadError(providerName, err))
			return
		}
		if ev.Data == "" || ev.Data == "[DONE]" {
			continue
		}
		chunk = wireResponse{}
		if err := json.Unmarshal([]byte(ev.Data), &chunk); err != nil {
			yield(llm.StreamEvent{}, invalidResponse(fmt.Sprintf("stream chunk carries invalid JSON: %v", err), err))
			return
		}
		chunks++
		if chunk.PromptFeedback != nil {
			feedback = chunk.PromptFeedback
		}
		err = a.add(&chunk)
		if !yieldAll(a.out, yield) {
			return
		}
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
	}
	if chunks == 0 || (a.finish == "" && a.candidates) {
		yield(llm.StreamEvent{}, &llm.Error{Kind: llm.ErrStreamInterrupted, Provider: providerName,
			Message: "the stream ended before a chunk with finishReason; the answer is incomplete"})
		return
	}
	resp, err := a.result(feedback)
	if err != nil {
		yield(llm.StreamEvent{}, err)
		return
	}
	if yieldAll(a.out, yield) {
		yield(llm.StreamEvent{Kind: llm.EventFinish, Response: resp}, nil)
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

// endpoint is the URL of the model's method.
func (c *Client) endpoint(model string, stream bool) string {
	u := c.cfg.BaseURL + "/v1beta/models/" + url.PathEscape(strings.TrimPrefix(model, "models/"))
	if stream {
		return u + ":streamGenerateContent?alt=sse"
	}
	return u + ":generateContent"
}

// send builds the body once and posts it, retrying per the policy.
func (c *Client) send(ctx context.Context, req llm.Request, stream bool) (*http.Response, error) {
	w, err := buildRequest(req)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(w)
	if err != nil {
		return nil, invalidRequest("encoding the request: " + err.Error())
	}
	target := c.endpoint(req.Model, stream)
	return llm.Send(ctx, c.http, func(ctx context.Context) (*http.Request, error) {
		r, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("x-goog-api-key", c.cfg.APIKey)
		return r, nil
	})
}
