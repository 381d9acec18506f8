package provider

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
)

// A bedrock provider with no credentials file takes the AWS SDK's default
// chain: the profile named in the configuration, from shared files written
// here, gives the key and the region the request is signed with.
func TestBedrockTakesTheDefaultChain(t *testing.T) {
	dir := t.TempDir()
	cfgFile, credFile := filepath.Join(dir, "config"), filepath.Join(dir, "credentials")
	if err := os.WriteFile(cfgFile, []byte("[profile fleet]\nregion = eu-north-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(credFile, []byte("[fleet]\naws_access_key_id = AKIAPROVIDER\naws_secret_access_key = s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION",
		"AWS_DEFAULT_REGION", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI"} {
		t.Setenv(v, "")
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", cfgFile)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", credFile)

	var mu sync.Mutex
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = r.Header.Get("Authorization")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
	}))
	defer srv.Close()
	c, err := New(Config{Provider: Bedrock, BaseURL: srv.URL, AWSProfile: "fleet"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), llm.Request{Model: "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
		Messages: []llm.Message{llm.UserMessage("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(auth, "Credential=AKIAPROVIDER/") || !strings.Contains(auth, "/eu-north-1/bedrock/aws4_request") {
		t.Fatalf("Authorization %q: not signed with the profile's key and region", auth)
	}
}

// Azure OpenAI: a key is used when one is set; without one, or with
// azure_auth entra, the client takes Entra ID's default chain (its
// endpoint must then be https); azure_auth key without a key, or an
// unknown mode, is refused with what to set.
func TestAzureAuthChoice(t *testing.T) {
	t.Setenv("AZURE_OPENAI_API_KEY", "")
	t.Setenv("AZURE_OPENAI_ENDPOINT", "")
	for _, c := range []struct {
		cfg     Config
		wantErr string
	}{
		{Config{Provider: Azure, BaseURL: "https://r.openai.azure.com", APIKey: "k"}, ""},
		{Config{Provider: Azure, BaseURL: "https://r.openai.azure.com"}, ""},
		{Config{Provider: Azure, BaseURL: "https://r.openai.azure.com", APIKey: "k", AzureAuth: "entra"}, ""},
		{Config{Provider: Azure, BaseURL: "http://r.openai.azure.com", AzureAuth: "entra"}, "only over TLS"},
		{Config{Provider: Azure, BaseURL: "https://r.openai.azure.com", AzureAuth: "key"}, "AZURE_OPENAI_API_KEY"},
		{Config{Provider: Azure, BaseURL: "https://r.openai.azure.com", AzureAuth: "oauth"}, "not key or entra"},
	} {
		_, err := New(c.cfg)
		if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("New(%+v) = %v, want error %q", c.cfg, err, c.wantErr)
		}
	}
}
