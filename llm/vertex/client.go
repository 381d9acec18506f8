package vertex

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/anthropic"
	"github.com/agentfleet/agentfleet/llm/gemini"
	"github.com/agentfleet/agentfleet/llm/internal/adapterkit"
)

// ProviderName names this adapter in errors and metrics.
const ProviderName = "vertex"

// Client speaks to Gemini and Anthropic models on Vertex AI, choosing the
// publisher by model name (claude*: anthropic, else google). It is safe
// for concurrent use.
type Client struct {
	cfg  Config
	http llm.HTTPConfig
	enc  anthropic.Encoder
}

var _ llm.Client = (*Client)(nil)

// New returns a client for cfg after applying defaults and validating it.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	return &Client{cfg: cfg, http: llm.HTTPConfig{Provider: ProviderName, Client: cfg.HTTPClient, Retry: cfg.Retry, Classify: classify}}, nil
}

// forcedAnswer reports whether req's ResponseFormat goes out as a forced
// tool call: always for Claude, and for Gemini models that cannot combine
// a response schema with function calling (gemini.ForcesAnswerTool).
func forcedAnswer(req llm.Request) bool { return isClaude(req.Model) || gemini.ForcesAnswerTool(req) }

// isClaude reports whether model is one of Anthropic's (publisher anthropic).
func isClaude(model string) bool { return strings.HasPrefix(strings.ToLower(model), "claude") }

// Complete calls generateContent or rawPredict and returns the whole answer.
func (c *Client) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	resp, err := c.send(ctx, req, false) //nolint:bodyclose // ReadResponse or YieldStream closes it
	if err != nil {
		return nil, err
	}
	parse := gemini.ParseResponse
	if isClaude(req.Model) {
		parse = anthropic.ParseResponse
	}
	out, err := adapterkit.ReadResponse(ProviderName, resp, parse)
	if err != nil {
		return nil, err
	}
	out, err = adapterkit.Answer(ProviderName, req, forcedAnswer(req), out)
	return out, llm.WithRequestID(err, resp.Header)
}

// Stream calls streamGenerateContent?alt=sse or streamRawPredict and yields
// events as they arrive, ending with EventFinish or an error.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		resp, err := c.send(ctx, req, true) //nolint:bodyclose // ReadResponse or YieldStream closes it
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		decode := gemini.DecodeSSE
		if isClaude(req.Model) {
			decode = anthropic.DecodeSSE
		}
		adapterkit.YieldStream(resp, adapterkit.EventStreamCheck(ProviderName), adapterkit.AnswerDecode(ProviderName, req, forcedAnswer(req), decode), yield) //nolint:bodyclose // YieldStream closes it
	}
}

// send encodes req for its publisher and sends it with a fresh access
// token at each attempt (the token source caches until expiry).
func (c *Client) send(ctx context.Context, req llm.Request, stream bool) (*http.Response, error) {
	if req.Model == "" {
		return nil, &llm.Error{Kind: llm.ErrInvalidRequest, Provider: ProviderName, Message: "the request names no model"}
	}
	body, header, err := c.encode(req, stream)
	if err != nil {
		return nil, err
	}
	build := llm.PostJSON(c.endpoint(req.Model, stream), body, header, stream)
	return llm.Send(ctx, c.http, func(ctx context.Context) (*http.Request, error) {
		r, err := build(ctx)
		if err != nil {
			return nil, err
		}
		tok, err := c.cfg.Tokens.Token()
		if err != nil {
			return nil, &llm.Error{Kind: llm.ErrAuthentication, Provider: ProviderName, Message: "getting an access token: " + err.Error()}
		}
		tok.SetAuthHeader(r)
		return r, nil
	})
}

// endpoint is the model method's URL:
// {BaseURL}/{v1|v1beta1}/projects/P/locations/L/publishers/{google|anthropic}/models/M:method.
func (c *Client) endpoint(model string, stream bool) string {
	base := c.cfg.BaseURL + "/" + c.cfg.APIVersion + "/projects/" + url.PathEscape(c.cfg.Project) + "/locations/" + url.PathEscape(c.cfg.Region) +
		"/publishers/"
	model = url.PathEscape(strings.TrimPrefix(model, "models/"))
	switch {
	case isClaude(model) && stream:
		return base + "anthropic/models/" + model + ":streamRawPredict"
	case isClaude(model):
		return base + "anthropic/models/" + model + ":rawPredict"
	case stream:
		return base + "google/models/" + model + ":streamGenerateContent?alt=sse"
	}
	return base + "google/models/" + model + ":generateContent"
}

// encode returns the body and headers for the model's publisher: Gemini's
// generateContent body as it is, or the Messages body without "model" and
// with anthropic_version vertex-2023-10-16 (beta names in anthropic-beta).
func (c *Client) encode(req llm.Request, stream bool) ([]byte, http.Header, error) {
	if !isClaude(req.Model) {
		body, err := gemini.EncodeBody(req)
		return body, nil, err
	}
	raw, betas, err := c.enc.Encode(req, stream)
	if err != nil {
		return nil, nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, &llm.Error{Kind: llm.ErrInvalidRequest, Provider: ProviderName, Message: "re-encoding the body: " + err.Error()}
	}
	delete(m, "model")
	m["anthropic_version"] = json.RawMessage(`"` + AnthropicVersion + `"`)
	body, err := json.Marshal(m)
	var h http.Header
	if len(betas) > 0 {
		h = http.Header{"Anthropic-Beta": {strings.Join(betas, ",")}}
	}
	return body, h, err
}

// classify reads a Google API error ({"error": {"code", "message",
// "status"}}) or, from Claude models, an Anthropic error body.
func classify(status int, h http.Header, body []byte) *llm.Error {
	if e := gemini.ClassifyError(status, h, body); e != nil {
		e.Provider = ProviderName
		return e
	}
	if e := anthropic.ClassifyError(status, h, body); e != nil {
		e.Provider = ProviderName
		return e
	}
	return nil
}
