package azure

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/chatcompat"
	"github.com/agentfleet/agentfleet/llm/internal/adapterkit"
	"github.com/agentfleet/agentfleet/llm/openai"
)

// ProviderName names this adapter in errors and metrics.
const ProviderName = "azure"

// DefaultAPIVersion is the api-version sent on deployment routes.
const DefaultAPIVersion = "2024-10-21"

// Config configures a Client.
type Config struct {
	// Endpoint is the resource's endpoint, e.g.
	// https://my-resource.openai.azure.com. Required.
	Endpoint string
	// APIKey is one of the resource's keys, sent in the api-key header.
	// Exactly one of APIKey and Credential is required.
	APIKey string
	// Credential gets Entra ID (Microsoft identity) tokens, sent as
	// "Authorization: Bearer" on each attempt: DefaultCredential, or any
	// azcore.TokenCredential (a client secret, a managed identity...).
	// The endpoint must then be https (or a loopback address).
	Credential azcore.TokenCredential
	// Scope is the scope tokens are asked for; "" means EntraScope.
	Scope string
	// APIVersion is the api-version of deployment routes; "" means
	// DefaultAPIVersion.
	APIVersion string
	// API is "chat" (Chat Completions on deployment routes, the default)
	// or "responses" (the Responses API on the v1 route).
	API string
	// Retry is the retry policy; zero fields mean the llm defaults.
	Retry llm.RetryPolicy
	// HTTPClient sends the requests; nil means a shared client.
	HTTPClient *http.Client
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if c.Endpoint == "" {
		return errors.New("azure Config.Endpoint is empty: set it to the resource's endpoint, e.g. https://my-resource.openai.azure.com (or AZURE_OPENAI_ENDPOINT)")
	}
	if err := llm.ValidateBaseURL("azure Config.Endpoint", c.Endpoint, "https://my-resource.openai.azure.com"); err != nil {
		return err
	}
	hasKey := strings.TrimSpace(c.APIKey) != ""
	switch {
	case hasKey && c.Credential != nil:
		return errors.New("azure Config has both APIKey and Credential: use a key or Entra ID, not both")
	case !hasKey && c.Credential == nil:
		return errors.New("azure Config has neither APIKey nor Credential: set AZURE_OPENAI_API_KEY, pass the key in the configuration, " +
			"or use Entra ID (azure.DefaultCredential; the worker's azure_auth: entra)")
	case c.Credential != nil && !tokenSafe(c.Endpoint):
		return fmt.Errorf("azure Config.Endpoint %q is not https: an Entra ID token is sent only over TLS (or to a loopback address)", c.Endpoint)
	}
	if c.API != "" && c.API != "chat" && c.API != "responses" {
		return fmt.Errorf("azure Config.API %q is not chat or responses", c.API)
	}
	return c.Retry.Validate()
}

// WithDefaults returns c with defaults filled in.
func (c Config) WithDefaults() Config {
	c.Endpoint = strings.TrimRight(c.Endpoint, "/")
	if c.APIVersion == "" {
		c.APIVersion = DefaultAPIVersion
	}
	if c.API == "" {
		c.API = "chat"
	}
	if c.Scope == "" {
		c.Scope = EntraScope
	}
	c.Retry = c.Retry.WithDefaults()
	return c
}

// Client talks to Azure OpenAI. It is safe for concurrent use.
type Client struct {
	kit adapterkit.Client
}

var _ llm.Client = (*Client)(nil)

// New returns a Client for cfg after validating it.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	header := http.Header{}
	kit := adapterkit.Client{HTTP: llm.HTTPConfig{Provider: ProviderName, Client: cfg.HTTPClient, Retry: cfg.Retry, Classify: openai.ClassifyError}}
	if cfg.Credential != nil {
		kit.Authorize = authorize(cfg.Credential, cfg.Scope)
	} else {
		header.Set("api-key", cfg.APIKey)
	}
	if cfg.API == "responses" {
		target := cfg.Endpoint + "/openai/v1/responses"
		kit.Encode = func(req llm.Request, stream bool) (adapterkit.Post, error) {
			body, err := openai.BuildRequest(req, stream)
			return adapterkit.Post{URL: target, Header: header, Body: body}, err
		}
		kit.Parse, kit.Decode = openai.ParseResponse, openai.DecodeSSE
	} else {
		kit.Encode = func(req llm.Request, stream bool) (adapterkit.Post, error) {
			body, err := chatcompat.BuildRequest(req, stream)
			return adapterkit.Post{URL: deploymentURL(cfg, req.Model), Header: header, Body: body}, err
		}
		kit.Parse, kit.Decode = parseChat, chatcompat.DecodeSSE
	}
	return &Client{kit: kit}, nil
}

// deploymentURL is the chat completions route of a deployment.
func deploymentURL(cfg Config, deployment string) string {
	return cfg.Endpoint + "/openai/deployments/" + url.PathEscape(deployment) +
		"/chat/completions?api-version=" + url.QueryEscape(cfg.APIVersion)
}

// parseChat is chatcompat.ParseResponse with a plain error result.
func parseChat(data []byte) (*llm.Response, error) {
	resp, err := chatcompat.ParseResponse(data)
	if err != nil {
		return nil, err
	}
	return resp, nil
}

// Complete sends req and returns the whole response.
func (c *Client) Complete(ctx context.Context, req llm.Request) (*llm.Response, error) {
	resp, err := c.kit.Complete(ctx, req)
	openai.NameComputerCalls(resp, openai.ComputerToolName(req)) // Responses API computer calls
	return resp, err
}

// Stream sends req with streaming on and yields its events, ending with
// EventFinish or an error.
func (c *Client) Stream(ctx context.Context, req llm.Request) iter.Seq2[llm.StreamEvent, error] {
	return openai.NameComputerStream(c.kit.Stream(ctx, req), openai.ComputerToolName(req))
}
