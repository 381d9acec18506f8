package bedrock

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// EnvCredentials reads AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN (optional) at each signing, so a rotated environment
// (a sidecar rewriting it is rare; a restart is usual) is seen.
func EnvCredentials() aws.CredentialsProvider {
	return aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		c := aws.Credentials{AccessKeyID: strings.TrimSpace(os.Getenv("AWS_ACCESS_KEY_ID")),
			SecretAccessKey: strings.TrimSpace(os.Getenv("AWS_SECRET_ACCESS_KEY")),
			SessionToken:    strings.TrimSpace(os.Getenv("AWS_SESSION_TOKEN")), Source: "environment"}
		if c.AccessKeyID == "" || c.SecretAccessKey == "" {
			return aws.Credentials{}, fmt.Errorf("bedrock: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not both set")
		}
		return c, nil
	})
}

// fileCredentials is the JSON a credentials file holds: the output of
// `aws configure export-credentials --format process`, or a mounted
// secret of the same shape.
type fileCredentials struct {
	AccessKeyID     string    `json:"AccessKeyId"`
	SecretAccessKey string    `json:"SecretAccessKey"`
	SessionToken    string    `json:"SessionToken"`
	Expiration      time.Time `json:"Expiration"`
}

// FileCredentials reads credentials from a JSON file
// ({"AccessKeyId", "SecretAccessKey", "SessionToken", "Expiration"}) at
// each signing, so a file that a rotation process rewrites is picked up.
// The worker configuration names the file, never the keys.
func FileCredentials(path string) aws.CredentialsProvider {
	return aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return aws.Credentials{}, fmt.Errorf("bedrock: reading the credentials file: %w", err)
		}
		var f fileCredentials
		if err := json.Unmarshal(b, &f); err != nil {
			return aws.Credentials{}, fmt.Errorf("bedrock: credentials file %s is not JSON with AccessKeyId and SecretAccessKey: %v", path, err)
		}
		if f.AccessKeyID == "" || f.SecretAccessKey == "" {
			return aws.Credentials{}, fmt.Errorf("bedrock: credentials file %s lacks AccessKeyId or SecretAccessKey", path)
		}
		return aws.Credentials{AccessKeyID: f.AccessKeyID, SecretAccessKey: f.SecretAccessKey, SessionToken: f.SessionToken,
			CanExpire: !f.Expiration.IsZero(), Expires: f.Expiration, Source: "file"}, nil
	})
}
