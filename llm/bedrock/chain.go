package bedrock

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
)

// ChainOptions narrows what DefaultChain loads. Every field is optional.
type ChainOptions struct {
	// Region wins over the region the chain finds (AWS_REGION,
	// AWS_DEFAULT_REGION, the profile's region).
	Region string
	// Profile names the shared config profile; "" means AWS_PROFILE, else
	// "default".
	Profile string
	// HTTPClient sends the chain's own requests (STS for web identity and
	// assumed roles, SSO, the instance metadata service), so they pass the
	// same egress guard as the model calls; nil means the SDK's client.
	HTTPClient *http.Client
}

// DefaultChain loads credentials and the region with the AWS SDK's default
// chain (github.com/aws/aws-sdk-go-v2/config LoadDefaultConfig), in the
// SDK's order: the AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN
// environment, the shared config and credentials files (AWS_CONFIG_FILE,
// AWS_SHARED_CREDENTIALS_FILE; profiles, assumed roles, SSO,
// credential_process), web identity (AWS_WEB_IDENTITY_TOKEN_FILE with
// AWS_ROLE_ARN: EKS service accounts), the ECS container endpoint and the
// EC2 instance role. The provider it returns caches credentials and
// refreshes them before they expire. Nothing is fetched here: a chain that
// finds no credentials fails at the first signing, with the SDK's message
// saying what it tried.
func DefaultChain(ctx context.Context, o ChainOptions) (aws.CredentialsProvider, string, error) {
	var opts []func(*config.LoadOptions) error
	if o.Region != "" {
		opts = append(opts, config.WithRegion(o.Region))
	}
	if o.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(o.Profile))
	}
	if o.HTTPClient != nil {
		opts = append(opts, config.WithHTTPClient(o.HTTPClient))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, "", fmt.Errorf("bedrock: loading the AWS configuration (environment, %s): %w", sharedFiles, err)
	}
	if cfg.Credentials == nil {
		return nil, "", errors.New("bedrock: the AWS SDK's default chain found no credential source")
	}
	if cfg.Region == "" {
		return nil, "", fmt.Errorf("bedrock: no AWS region: set the provider's region, AWS_REGION, or region in the profile of %s", sharedFiles)
	}
	return cfg.Credentials, cfg.Region, nil
}

const sharedFiles = "the shared config and credentials files (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE)"
