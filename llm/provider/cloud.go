package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"golang.org/x/oauth2"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/azure"
	"github.com/agentfleet/agentfleet/llm/bedrock"
	"github.com/agentfleet/agentfleet/llm/vertex"
)

// newBedrock builds the Bedrock client: credentials from CredentialsFile
// when it is set, else the AWS SDK's default chain (environment, shared
// config and credentials files with AWSProfile, web identity, container
// and instance roles: bedrock.DefaultChain), whose region Region
// overrides.
func newBedrock(cfg Config) (llm.Client, error) {
	region := cfg.Region
	var creds aws.CredentialsProvider
	if cfg.CredentialsFile != "" {
		creds = bedrock.FileCredentials(cfg.CredentialsFile)
	} else {
		var err error
		creds, region, err = bedrock.DefaultChain(context.Background(),
			bedrock.ChainOptions{Region: cfg.Region, Profile: cfg.AWSProfile, HTTPClient: cfg.HTTPClient})
		if err != nil {
			return nil, fmt.Errorf("provider: %w", err)
		}
	}
	return client(bedrock.New(bedrock.Config{Region: region, BaseURL: cfg.BaseURL, Credentials: creds,
		Retry: cfg.Retry, HTTPClient: cfg.HTTPClient}))
}

// newVertex builds the Vertex AI client: tokens from the service account
// key CredentialsFile names, else Application Default Credentials.
func newVertex(cfg Config) (llm.Client, error) {
	var tokens oauth2.TokenSource
	var err error
	if cfg.CredentialsFile != "" {
		tokens, err = vertex.ServiceAccountTokens(context.Background(), cfg.CredentialsFile)
	} else {
		tokens, err = vertex.DefaultTokens(context.Background())
	}
	if err != nil {
		return nil, err
	}
	return client(vertex.New(vertex.Config{Project: cfg.Project, Region: cfg.Region, BaseURL: cfg.BaseURL, Tokens: tokens,
		Retry: cfg.Retry, HTTPClient: cfg.HTTPClient}))
}

// newAzure builds the Azure OpenAI client: the endpoint is BaseURL, else
// AZURE_OPENAI_ENDPOINT; the api-version APIVersion, else
// AZURE_OPENAI_API_VERSION, else the adapter's default. AzureAuth chooses
// the authentication: "key" is APIKey, else AZURE_OPENAI_API_KEY; "entra"
// is Entra ID through the Azure SDK's default credential chain
// (azure.DefaultCredential); "" is the key when one is set, else Entra ID.
func newAzure(cfg Config) (llm.Client, error) {
	endpoint := cfg.BaseURL
	if endpoint == "" {
		endpoint = envKey([]string{"AZURE_OPENAI_ENDPOINT"})
	}
	version := cfg.APIVersion
	if version == "" {
		version = envKey([]string{"AZURE_OPENAI_API_VERSION"})
	}
	ac := azure.Config{Endpoint: endpoint, APIVersion: version, Retry: cfg.Retry, HTTPClient: cfg.HTTPClient}
	key := cfg.APIKey
	if key == "" {
		key = envKey(keyEnv[Azure])
	}
	switch strings.ToLower(strings.TrimSpace(cfg.AzureAuth)) {
	case "key":
		ac.APIKey = key
	case "entra":
	case "":
		if key != "" {
			ac.APIKey = key
			break
		}
	default:
		return nil, fmt.Errorf("provider: Config.AzureAuth %q is not key or entra (\"\" means the key when one is set, else Entra ID)", cfg.AzureAuth)
	}
	if ac.APIKey == "" && !strings.EqualFold(strings.TrimSpace(cfg.AzureAuth), "key") {
		cred, err := azure.DefaultCredential(cfg.HTTPClient)
		if err != nil {
			return nil, fmt.Errorf("provider: %w", err)
		}
		ac.Credential = cred
	}
	return client(azure.New(ac))
}
