package azure

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/agentfleet/agentfleet/llm"
)

// EntraScope is the scope of the tokens Azure OpenAI accepts: Azure AI
// services' resource, ".default" for the permissions granted to the
// identity.
const EntraScope = "https://cognitiveservices.azure.com/.default"

// DefaultCredential returns the Azure SDK's default credential chain
// (azidentity.NewDefaultAzureCredential), in the SDK's order: a service
// principal from the environment (AZURE_TENANT_ID, AZURE_CLIENT_ID and
// AZURE_CLIENT_SECRET or AZURE_CLIENT_CERTIFICATE_PATH), workload identity
// (AKS: AZURE_FEDERATED_TOKEN_FILE), a managed identity, then the Azure
// CLI's and the Azure Developer CLI's login. Tokens are cached and
// refreshed by the SDK. hc, when not nil, sends the chain's own requests
// (to Entra ID and the managed identity endpoint), so they pass the same
// egress guard as the model calls.
func DefaultCredential(hc *http.Client) (azcore.TokenCredential, error) {
	var o azidentity.DefaultAzureCredentialOptions
	if hc != nil {
		o.ClientOptions.Transport = hc
	}
	cred, err := azidentity.NewDefaultAzureCredential(&o)
	if err != nil {
		return nil, fmt.Errorf("azure: Entra ID's default credential chain: %w", err)
	}
	return cred, nil
}

// authorize returns the adapterkit hook that puts a token for scope in
// each attempt's Authorization header.
func authorize(cred azcore.TokenCredential, scope string) func(ctx context.Context, r *http.Request) error {
	return func(ctx context.Context, r *http.Request) error {
		tok, err := cred.GetToken(ctx, policy.TokenRequestOptions{Scopes: []string{scope}})
		if err != nil {
			return &llm.Error{Kind: llm.ErrAuthentication, Provider: ProviderName,
				Message: "getting an Entra ID token for " + scope + ": " + err.Error(), Err: err}
		}
		r.Header.Set("Authorization", "Bearer "+tok.Token)
		return nil
	}
}

// tokenSafe reports whether a bearer token may be sent to endpoint: over
// HTTPS, or to a loopback address (a local proxy or test server).
func tokenSafe(endpoint string) bool {
	u, err := url.Parse(endpoint)
	if err != nil {
		return false
	}
	if u.Scheme == "https" {
		return true
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
