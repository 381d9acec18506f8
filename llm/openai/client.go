package openai

import (
	"context"
	"io"
	"iter"
	"net/http"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/internal/adapterkit"
)

// ProviderName is the name used in errors, responses and ProviderOptions.
const ProviderName = "openai"

// DefaultBaseURL is the OpenAI API root.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a Client. The zero value of every field but APIKey
// means its default.
type Config struct {
	// BaseURL is the API root; requests go to BaseURL + "/responses".
	// Default DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a bearer token. Required.
	APIKey string
	// Retry is the retry policy; zero fields mean the llm defaults.
	Retry llm.RetryPolicy
	// HTTPClient sends the requests; nil means a shared client.
	HTTPClient *http.Client
	// Header holds extra headers sent with every request (for example
	// OpenAI-Organization or OpenAI-Project).
	Header http.Header
}

// WithDefaults returns c with defaults filled in.
func (c Config) WithDefaults() Config {
	c.BaseURL, c.Retry = adapterkit.Defaults(c.BaseURL, DefaultBaseURL, c.Retry)
	return c
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	return adapterkit.Validate("openai", "set OPENAI_API_KEY", c.APIKey, c.BaseURL, DefaultBaseURL, c.Retry)
}

// Client talks to the OpenAI Responses API. It is safe for concurrent use.
type Client struct {
	kit adapterkit.Client
}

var _ llm.Client = (*Client)(nil)

// New returns a Client for cfg.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	header := cfg.Header.Clone()
	if header == nil {
		header = http.Header{}
	}
	header.Set("Authorization", "Bearer "+cfg.APIKey)
	url := cfg.BaseURL + "/responses"
	return &Client{kit: adapterkit.Client{
		HTTP: llm.HTTPConfig{Provider: ProviderName, Client: cfg.HTTPClient, Retry: cfg.Retry, Classify: ClassifyError},
		Encode: func(req llm.Request, stream bool) (adapterkit.Post, error) {
			body, err := BuildRequest(req, stream)
			return adapterkit.Post{URL: url, Header: header, Body: body}, err
		},
		Parse:  ParseResponse,
		Decode: decodeStream,
	}}, nil
}

// Complete sends req and returns the whole response.
func (c *Client) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	resp, err := c.kit.Complete(ctx, req)
	NameComputerCalls(resp, ComputerToolName(req))
	return resp, err
}

// Stream sends req with streaming on and yields its events, ending with
// EventFinish or an error. Computer calls carry the name of the
// request's computer tool, as in Complete.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return NameComputerStream(c.kit.Stream(ctx, req), ComputerToolName(req))
}

// DecodeSSE reads a Responses API event stream, yielding unified events
// and ending with EventFinish or an error; for adapters that reach the
// API through another URL scheme (llm/azure).
func DecodeSSE(body io.Reader, yield func(llm.StreamEvent, error) bool) { decodeStream(body, yield) }
