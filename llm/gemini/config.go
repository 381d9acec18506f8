package gemini

import (
	"net/http"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/internal/adapterkit"
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
	c.BaseURL, c.Retry = adapterkit.Defaults(c.BaseURL, DefaultBaseURL, c.Retry)
	return c
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	return adapterkit.Validate("gemini", "set GEMINI_API_KEY (or GOOGLE_API_KEY)", c.APIKey, c.BaseURL, DefaultBaseURL, c.Retry)
}
