package vertex

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/oauth2"

	"github.com/agentfleet/agentfleet/llm"
)

// AnthropicVersion is the anthropic_version every Claude-on-Vertex body carries.
const AnthropicVersion = "vertex-2023-10-16"

// Config configures a Client.
type Config struct {
	// Project is the Google Cloud project id. Required.
	Project string
	// Region is the Vertex AI location, e.g. us-east5 or europe-west1, or
	// "global". Required.
	Region string
	// BaseURL overrides the endpoint (default
	// https://<region>-aiplatform.googleapis.com, or
	// https://aiplatform.googleapis.com for global).
	BaseURL string
	// APIVersion is the path's version: "v1" (the default) or "v1beta1",
	// where preview features appear first.
	APIVersion string
	// Tokens gives the OAuth2 access tokens sent as Bearer. Required: see
	// ServiceAccountTokens and DefaultTokens.
	Tokens oauth2.TokenSource
	// Retry is the retry policy; zero fields mean llm defaults.
	Retry llm.RetryPolicy
	// HTTPClient sends the model requests; nil uses a shared client.
	HTTPClient *http.Client
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.BaseURL == "" {
		c.BaseURL = "https://" + c.Region + "-aiplatform.googleapis.com"
		if c.Region == "global" {
			c.BaseURL = "https://aiplatform.googleapis.com"
		}
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	if c.APIVersion == "" {
		c.APIVersion = "v1"
	}
	c.Retry = c.Retry.WithDefaults()
	return c
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case c.Project == "" || strings.ContainsAny(c.Project, "/ "):
		return fmt.Errorf("vertex Config.Project %q must be a Google Cloud project id", c.Project)
	case c.Region == "" || strings.ContainsAny(c.Region, "/:@ "):
		return fmt.Errorf("vertex Config.Region %q must be a Vertex AI location such as us-east5 or global", c.Region)
	case c.APIVersion != "" && c.APIVersion != "v1" && c.APIVersion != "v1beta1":
		return fmt.Errorf("vertex Config.APIVersion %q is not v1 or v1beta1", c.APIVersion)
	case c.Tokens == nil:
		return errors.New("vertex Config.Tokens is required: use vertex.ServiceAccountTokens(file) or vertex.DefaultTokens()")
	}
	if c.BaseURL != "" {
		if err := llm.ValidateBaseURL("vertex Config.BaseURL", c.BaseURL, "https://us-east5-aiplatform.googleapis.com"); err != nil {
			return err
		}
	}
	return c.Retry.Validate()
}
