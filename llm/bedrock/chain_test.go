package bedrock_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/bedrock"
	"github.com/agentfleet/agentfleet/llm/llmtest"
)

// isolateAWS clears every variable the AWS SDK's default chain reads and
// points its shared files at empty files in a temp dir, so a test sees
// only what it sets (never the machine's own profile or instance role).
func isolateAWS(t *testing.T) (configFile, credentialsFile string) {
	dir := t.TempDir()
	configFile, credentialsFile = filepath.Join(dir, "config"), filepath.Join(dir, "credentials")
	for _, f := range []string{configFile, credentialsFile} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
		"AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_ENDPOINT_URL",
		"AWS_ENDPOINT_URL_BEDROCK_RUNTIME"} {
		t.Setenv(v, "")
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", configFile)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", credentialsFile)
	return configFile, credentialsFile
}

// chainClient builds a client whose credentials and region come from
// bedrock.DefaultChain, pointed at f.
func chainClient(t *testing.T, f *fakeBedrock, o bedrock.ChainOptions) (*bedrock.Client, string) {
	t.Helper()
	creds, region, err := bedrock.DefaultChain(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	retry, _ := llmtest.FastRetry(1)
	c, err := bedrock.New(bedrock.Config{Region: region, BaseURL: srv.URL, Credentials: creds, Retry: retry})
	if err != nil {
		t.Fatal(err)
	}
	return c, region
}

func okAnswer(w http.ResponseWriter, _ bool) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"id":"m","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
}

// Credentials and the region from the environment reach the server in a
// SigV4 signature it verifies, the session token in X-Amz-Security-Token;
// a cross-region inference profile id goes to its own path.
func TestDefaultChainFromEnvironment(t *testing.T) {
	isolateAWS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAENVEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "env/secret/EXAMPLE")
	t.Setenv("AWS_SESSION_TOKEN", "env-session-token")
	t.Setenv("AWS_REGION", "us-west-2")
	f := &fakeBedrock{t: t, key: "AKIAENVEXAMPLE", secret: "env/secret/EXAMPLE", region: "us-west-2", answer: okAnswer}
	c, region := chainClient(t, f, bedrock.ChainOptions{})
	if region != "us-west-2" {
		t.Fatalf("region %q, want AWS_REGION's us-west-2", region)
	}
	req := request()
	req.Model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	if _, err := c.Complete(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if len(f.bad) > 0 {
		t.Fatalf("signature: %s", f.bad[0])
	}
	if want := "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke"; f.paths[0] != want {
		t.Errorf("path %s, want %s", f.paths[0], want)
	}
	if got := f.headers[0].Get("X-Amz-Security-Token"); got != "env-session-token" {
		t.Errorf("X-Amz-Security-Token %q", got)
	}
}

// A profile of the shared config file (its region) and of the shared
// credentials file (its keys), both written here, sign the request; an
// explicit region wins over the profile's.
func TestDefaultChainFromSharedFiles(t *testing.T) {
	configFile, credentialsFile := isolateAWS(t)
	write(t, configFile, "[default]\nregion = ap-south-1\n\n[profile fleet]\nregion = eu-west-3\n")
	write(t, credentialsFile, "[default]\naws_access_key_id = AKIADEFAULT\naws_secret_access_key = default-secret\n\n"+
		"[fleet]\naws_access_key_id = AKIAFLEETEXAMPLE\naws_secret_access_key = fleet/secret/EXAMPLE\n")

	t.Run("named profile", func(t *testing.T) {
		f := &fakeBedrock{t: t, key: "AKIAFLEETEXAMPLE", secret: "fleet/secret/EXAMPLE", region: "eu-west-3", answer: okAnswer}
		c, region := chainClient(t, f, bedrock.ChainOptions{Profile: "fleet"})
		if region != "eu-west-3" {
			t.Fatalf("region %q, want the profile's eu-west-3", region)
		}
		complete(t, c, f, "global.anthropic.claude-haiku-4-5-20251001-v1:0")
	})
	t.Run("AWS_PROFILE and an explicit region", func(t *testing.T) {
		t.Setenv("AWS_PROFILE", "fleet")
		f := &fakeBedrock{t: t, key: "AKIAFLEETEXAMPLE", secret: "fleet/secret/EXAMPLE", region: "eu-central-1", answer: okAnswer}
		c, region := chainClient(t, f, bedrock.ChainOptions{Region: "eu-central-1"})
		if region != "eu-central-1" {
			t.Fatalf("region %q, want the explicit eu-central-1", region)
		}
		complete(t, c, f, "eu.anthropic.claude-sonnet-4-20250514-v1:0")
	})
	t.Run("default profile", func(t *testing.T) {
		f := &fakeBedrock{t: t, key: "AKIADEFAULT", secret: "default-secret", region: "ap-south-1", answer: okAnswer}
		c, _ := chainClient(t, f, bedrock.ChainOptions{})
		complete(t, c, f, "apac.anthropic.claude-sonnet-4-20250514-v1:0")
	})
}

// With no credentials anywhere (the instance metadata service disabled),
// the first call fails as an authentication error naming the chain's
// failure, and nothing reaches the server; with no region, DefaultChain
// says how to set one.
func TestDefaultChainWithNothing(t *testing.T) {
	isolateAWS(t)
	f := &fakeBedrock{t: t, answer: okAnswer}
	c, _ := chainClient(t, f, bedrock.ChainOptions{Region: "us-east-1"})
	_, err := c.Complete(context.Background(), request())
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.ErrAuthentication {
		t.Fatalf("err %v, want ErrAuthentication", err)
	}
	if len(f.paths) != 0 {
		t.Fatalf("unsigned requests reached the server: %v", f.paths)
	}
	if _, _, err := bedrock.DefaultChain(context.Background(), bedrock.ChainOptions{}); err == nil || !strings.Contains(err.Error(), "AWS_REGION") {
		t.Fatalf("no region: %v", err)
	}
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// complete sends one request for model and checks it reached f signed
// with f's key, at model's path.
func complete(t *testing.T, c *bedrock.Client, f *fakeBedrock, model string) {
	t.Helper()
	req := request()
	req.Model = model
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "ok" {
		t.Errorf("answer %q", resp.Text())
	}
	if len(f.bad) > 0 {
		t.Fatalf("signature: %s", f.bad[0])
	}
	if want := "/model/" + strings.ReplaceAll(model, ":", "%3A") + "/invoke"; f.paths[len(f.paths)-1] != want {
		t.Errorf("path %s, want %s", f.paths[len(f.paths)-1], want)
	}
}
