package bedrock

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/agentfleet/agentfleet/llm"
)

// AnthropicVersion is the anthropic_version every Bedrock body carries.
const AnthropicVersion = "bedrock-2023-05-31"

// Config configures a Client.
type Config struct {
	// Region is the AWS region of the Bedrock runtime, e.g. us-east-1.
	// Required.
	Region string
	// BaseURL overrides the endpoint (default
	// https://bedrock-runtime.<region>.amazonaws.com): a VPC endpoint, or a
	// test server.
	BaseURL string
	// Credentials signs the requests. Required: see EnvCredentials and
	// FileCredentials.
	Credentials aws.CredentialsProvider
	// Retry is the retry policy; zero fields mean llm defaults.
	Retry llm.RetryPolicy
	// HTTPClient sends the requests; nil uses a shared client.
	HTTPClient *http.Client
	// Now gives the signing time; nil means time.Now (tests fix it).
	Now func() time.Time
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.BaseURL == "" && c.Region != "" {
		c.BaseURL = "https://bedrock-runtime." + c.Region + ".amazonaws.com"
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	c.Retry = c.Retry.WithDefaults()
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	switch {
	case c.Region == "":
		return errors.New("bedrock Config.Region is required (the AWS region of the Bedrock runtime, e.g. us-east-1)")
	case strings.ContainsAny(c.Region, "/:@ "):
		return fmt.Errorf("bedrock Config.Region %q is not a region name such as us-east-1", c.Region)
	case c.Credentials == nil:
		return errors.New("bedrock Config.Credentials is required: use bedrock.EnvCredentials() or bedrock.FileCredentials(path)")
	}
	if c.BaseURL != "" {
		if err := llm.ValidateBaseURL("bedrock Config.BaseURL", c.BaseURL, "https://bedrock-runtime.us-east-1.amazonaws.com"); err != nil {
			return err
		}
	}
	return c.Retry.Validate()
}
