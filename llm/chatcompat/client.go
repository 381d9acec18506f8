package chatcompat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/openai"
)

// ProviderName is the name used in errors, responses and ProviderOptions.
const ProviderName = "chatcompat"

// Config configures a Client.
type Config struct {
	// BaseURL is the API root that ends in /v1 (for example
	// http://localhost:11434/v1 for Ollama, http://localhost:8080/v1 for
	// llama.cpp, https://openrouter.ai/api/v1). Required.
	BaseURL string
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
	if c.BaseURL == "" {
		return errors.New("chatcompat: Config.BaseURL is empty; set it to the server's API root, e.g. http://localhost:11434/v1")
	}
	if !strings.HasPrefix(c.BaseURL, "http://") && !strings.HasPrefix(c.BaseURL, "https://") {
		return fmt.Errorf("chatcompat: Config.BaseURL must start with http:// or https://, got %q", c.BaseURL)
	}
	return c.Retry.Validate()
}

// WithDefaults returns c with defaults filled in.
func (c Config) WithDefaults() Config {
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	c.Retry = c.Retry.WithDefaults()
	return c
}

// Client talks to an OpenAI-compatible Chat Completions endpoint. It is safe
// for concurrent use.
type Client struct {
	cfg    Config
	header http.Header // Config.Header plus authorization
	http   llm.HTTPConfig
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
	if cfg.APIKey != "" {
		header.Set("Authorization", "Bearer "+cfg.APIKey)
	}
	return &Client{cfg: cfg, header: header, http: llm.HTTPConfig{
		Provider: ProviderName, Client: cfg.HTTPClient, Retry: cfg.Retry, Classify: openai.ClassifyError,
	}}, nil
}

// Complete sends req and returns the whole response.
func (c *Client) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	body, err := BuildRequest(req, false)
	if err != nil {
		return nil, err
	}
	resp, err := llm.Send(ctx, c.http, c.builder(body, false))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	out, perr := ParseResponse(data)
	if perr != nil {
		perr.RequestID = resp.Header.Get("x-request-id")
		return nil, perr
	}
	return out, nil
}

// Stream sends req with streaming on and yields its events.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return func(yield func(llm.StreamEvent, error) bool) {
		body, err := BuildRequest(req, true)
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		resp, err := llm.Send(ctx, c.http, c.builder(body, true))
		if err != nil {
			yield(llm.StreamEvent{}, err)
			return
		}
		defer resp.Body.Close()
		decodeStream(resp.Body, resp.Header.Get("x-request-id"), yield)
	}
}

func (c *Client) builder(body []byte, stream bool) func(context.Context) (*http.Request, error) {
	return llm.PostJSON(c.cfg.BaseURL+"/chat/completions", body, c.header, stream)
}
