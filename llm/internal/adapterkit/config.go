package adapterkit

import (
	"fmt"
	"strings"

	"github.com/agentfleet/agentfleet/llm"
)

// Defaults is the WithDefaults of a hosted provider's Config: baseURL
// defaults to def and loses any trailing slash; retry gets llm's defaults.
func Defaults(baseURL, def string, retry llm.RetryPolicy) (string, llm.RetryPolicy) {
	if baseURL == "" {
		baseURL = def
	}
	return strings.TrimRight(baseURL, "/"), retry.WithDefaults()
}

// Validate is the Validate of a hosted provider's Config: a key is
// required (keyHint says where it usually comes from, e.g. "set
// OPENAI_API_KEY"), the base URL must parse, the retry policy must hold.
func Validate(provider, keyHint, apiKey, baseURL, def string, retry llm.RetryPolicy) error {
	if strings.TrimSpace(apiKey) == "" {
		return fmt.Errorf("%s: no API key: %s, or set api_key in its configuration (a worker's providers.<profile>.api_key)", provider, keyHint)
	}
	if err := llm.ValidateBaseURL(provider+" Config.BaseURL", baseURL, def); err != nil {
		return err
	}
	return retry.Validate()
}
