package gemini

import (
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
	"github.com/agentfleet/agentfleet/llm/internal/adapterkit"
)

// Client speaks the Gemini API generateContent and streamGenerateContent. It
// is safe for concurrent use.
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
	header.Set("x-goog-api-key", cfg.APIKey)
	return &Client{kit: adapterkit.Client{
		HTTP: llm.HTTPConfig{Provider: providerName, Client: cfg.HTTPClient, Retry: cfg.Retry, Classify: classify},
		Encode: func(req llm.Request, stream bool) (adapterkit.Post, error) {
			body, err := encode(req)
			return adapterkit.Post{URL: endpoint(cfg.BaseURL, req.Model, stream), Header: header, Body: body}, err
		},
		Parse:        parseResponse,
		Decode:       decodeStream,
		ForcedAnswer: ForcesAnswerTool,
	}}, nil
}

// Complete calls generateContent and returns the whole answer.
func (c *Client) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	return c.kit.Complete(ctx, req)
}

// Stream calls streamGenerateContent?alt=sse and yields events as chunks
// arrive, ending with EventFinish or an error.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return c.kit.Stream(ctx, req)
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
		if !adapterkit.YieldAll(a.out, yield) {
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
	if adapterkit.YieldAll(a.out, yield) {
		yield(llm.StreamEvent{Kind: llm.EventFinish, Response: resp}, nil)
	}
}

// endpoint is the URL of the model's method.
func endpoint(base, model string, stream bool) string {
	u := base + "/v1beta/models/" + url.PathEscape(strings.TrimPrefix(model, "models/"))
	if stream {
		return u + ":streamGenerateContent?alt=sse"
	}
	return u + ":generateContent"
}

// encode builds the JSON body of req.
func encode(req llm.Request) ([]byte, error) {
	w, err := buildRequest(req)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(w)
	if err != nil {
		return nil, invalidRequest("encoding the request: " + err.Error())
	}
	return body, nil
}
