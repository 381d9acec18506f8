package anthropic

import (
	"net/http"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/internal/adapterkit"
)

// DefaultBaseURL is the Anthropic API root; requests go to BaseURL + "/v1/messages".
const DefaultBaseURL = "https://api.anthropic.com"

// APIVersion is the anthropic-version header every request carries.
const APIVersion = "2023-06-01"

// Config configures a Client. The zero value of every field but APIKey means
// the documented default.
type Config struct {
	// BaseURL is the API root without /v1; default DefaultBaseURL. Point it
	// at a proxy or at the simulated provider (llm/sim).
	BaseURL string
	// APIKey is sent as x-api-key. Required.
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
	return adapterkit.Validate("anthropic", "set ANTHROPIC_API_KEY", c.APIKey, c.BaseURL, DefaultBaseURL, c.Retry)
}
