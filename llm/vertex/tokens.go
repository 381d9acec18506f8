package vertex

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// Scope is the OAuth2 scope Vertex AI calls need.
const Scope = "https://www.googleapis.com/auth/cloud-platform"

// ServiceAccountTokens returns tokens for the service account whose JSON
// key file is at path: a JWT signed with its private key is exchanged at
// the key's token_uri for access tokens, cached until they expire. The
// worker configuration names the file, never the key.
func ServiceAccountTokens(ctx context.Context, path string) (oauth2.TokenSource, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("vertex: reading the service account key: %w", err)
	}
	creds, err := google.CredentialsFromJSONWithType(ctx, b, google.ServiceAccount, Scope)
	if err != nil {
		return nil, fmt.Errorf("vertex: service account key %s: %w", path, err)
	}
	return creds.TokenSource, nil
}

// DefaultTokens returns Application Default Credentials: the file that
// GOOGLE_APPLICATION_CREDENTIALS names (a service account key or a
// workload identity federation configuration), gcloud's user credentials,
// or, on Google Cloud (GKE with Workload Identity, Cloud Run, GCE), the
// metadata server's tokens for the workload's service account.
func DefaultTokens(ctx context.Context) (oauth2.TokenSource, error) {
	ts, err := google.DefaultTokenSource(ctx, Scope)
	if err != nil {
		return nil, fmt.Errorf("vertex: no application default credentials (set GOOGLE_APPLICATION_CREDENTIALS or run on Google Cloud with a service account): %w", err)
	}
	return ts, nil
}
