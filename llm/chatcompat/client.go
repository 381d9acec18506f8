package chatcompat

import (
	"context"
	"errors"
	"io"
	"iter"
	"net/http"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/internal/adapterkit"
	"github.com/agentfleet/agentfleet/llm/openai"
)

// ProviderName is the name used in errors, responses and ProviderOptions.
const ProviderName = "chatcompat"

// Config configures a Client.
type Config struct {
	// BaseURL is the API root that ends in /v1 (for example
	// http://localhost:11434/v1 for Ollama, http://localhost:8080/v1 for
	// llama.cpp, https://openrouter.ai/api/v1). Required unless the
	// dialect has one.
	BaseURL string
	// Dialect names the host's dialect (Dialects: groq, mistral, ollama,
	// ...); "" picks the one whose host serves BaseURL, else Generic.
	Dialect string
	// Overrides change single fields of the dialect.
	Overrides Overrides
	// APIKey is sent as a bearer token when set; local servers need none.
	APIKey string
	// Retry is the retry policy; zero fields mean the llm defaults.
	Retry llm.RetryPolicy
	// HTTPClient sends the requests; nil means a shared client.
	HTTPClient *http.Client
	// Header holds extra headers sent with every request (for example
	// OpenRouter's HTTP-Referer and X-Title).
	Header http.Header
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	d, err := c.dialect()
	if err != nil {
		return err
	}
	if c.BaseURL == "" && d.BaseURL == "" {
		return errors.New("chatcompat Config.BaseURL is empty: set it to the server's API root, e.g. http://localhost:11434/v1, or name a dialect that has one")
	}
	if c.BaseURL == "" {
		return nil
	}
	if err := llm.ValidateBaseURL("chatcompat Config.BaseURL", c.BaseURL, "http://localhost:11434/v1"); err != nil {
		return err
	}
	return c.Retry.Validate()
}

// dialect resolves the configured dialect with its overrides.
func (c Config) dialect() (Dialect, error) {
	d, err := DialectFor(c.Dialect, c.BaseURL)
	if err != nil {
		return d, err
	}
	return c.Overrides.Apply(d)
}

// WithDefaults returns c with defaults filled in: the dialect's base URL
// when c has none.
func (c Config) WithDefaults() Config {
	if c.BaseURL == "" {
		if d, err := c.dialect(); err == nil {
			c.BaseURL = d.BaseURL
		}
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	c.Retry = c.Retry.WithDefaults()
	return c
}

// Client talks to an OpenAI-compatible Chat Completions endpoint. It is safe
// for concurrent use.
type Client struct {
	kit adapterkit.Client
}

var _ llm.Client = (*Client)(nil)

// New returns a Client for cfg.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d, _ := cfg.dialect() // Validate checked it
	cfg = cfg.WithDefaults()
	header := http.Header{}
	for k, v := range d.Header {
		header.Set(k, v)
	}
	for k, vs := range cfg.Header {
		header[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	if cfg.APIKey != "" {
		header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	url := cfg.BaseURL + "/chat/completions"
	return &Client{kit: adapterkit.Client{
		HTTP: llm.HTTPConfig{Provider: ProviderName, Client: cfg.HTTPClient, Retry: cfg.Retry, Classify: openai.ClassifyError},
		Encode: func(req llm.Request, stream bool) (adapterkit.Post, error) {
			body, err := BuildDialectRequest(d, req, stream)
			return adapterkit.Post{URL: url, Header: header, Body: body}, err
		},
		Parse:        parseResponse,
		Decode:       decodeStream,
		ForcedAnswer: func(llm.Request) bool { return d.ResponseFormat == "tool" },
	}}, nil
}

// parseResponse is ParseResponse with a plain error result, so that no
// typed nil *llm.Error reaches the caller.
func parseResponse(data []byte) (*llm.Response, error) {
	resp, err := ParseResponse(data)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// Complete sends req and returns the whole response.
func (c *Client) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	return c.kit.Complete(ctx, req)
}

// Stream sends req with streaming on and yields its events, ending with
// EventFinish or an error.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return c.kit.Stream(ctx, req)
}

// DecodeSSE reads a Chat Completions event stream, yielding unified events
// and ending with EventFinish or an error; for adapters that reach these
// servers through another URL scheme (llm/azure).
func DecodeSSE(body io.Reader, yield func(llm.StreamEvent, error) bool) { decodeStream(body, yield) }
