package gemini

import (
	"errors"
	"net/http"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// DefaultBaseURL is the Gemini API root; requests go to
// BaseURL + "/v1beta/models/{model}:generateContent".
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// Config configures a Client. The zero value of every field but APIKey means
// the documented default.
type Config struct {
	// BaseURL is the API root without the version; default DefaultBaseURL.
	BaseURL string
	// APIKey is sent as x-goog-api-key. Required.
	APIKey string
	// Retry is the retry policy; zero fields mean llm defaults.
	Retry llm.RetryPolicy
	// HTTPClient sends the requests; nil uses a shared client without a
	// timeout (ctx and the idle watchdog bound each call).
	HTTPClient *http.Client
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	c.Retry = c.Retry.WithDefaults()
	return c
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	if strings.TrimSpace(c.APIKey) == "" {
		return errors.New("gemini Config.APIKey is empty: set GEMINI_API_KEY (or GOOGLE_API_KEY) or pass the key in the configuration")
	}
	if err := llm.ValidateBaseURL("gemini Config.BaseURL", c.BaseURL, DefaultBaseURL); err != nil {
		return err
	}
	return c.Retry.Validate()
}
