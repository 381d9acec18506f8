package azure_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/agentfleet/agentfleet/llm"
	"github.com/agentfleet/agentfleet/llm/azure"
)

const (
	tenant   = "00000000-0000-0000-0000-0000000000aa"
	clientID = "11111111-2222-3333-4444-555555555555"
	secret   = "client-secret-EXAMPLE"
)

// authority is a local Entra ID: OpenID discovery for the tenant and a
// token endpoint that grants client_credentials for the one client and
// secret, recording each grant's form.
type authority struct {
	srv    *httptest.Server
	mu     sync.Mutex
	grants []url.Values
	next   string // the access token to issue
}

func newAuthority(t *testing.T) *authority {
	a := &authority{next: "entra-token-1"}
	a.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		base := a.srv.URL + "/" + tenant
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration"):
			_ = json.NewEncoder(w).Encode(map[string]any{
				"token_endpoint": base + "/oauth2/v2.0/token", "authorization_endpoint": base + "/oauth2/v2.0/authorize",
				"issuer": base + "/v2.0", "device_authorization_endpoint": base + "/oauth2/v2.0/devicecode"})
		case r.Method == http.MethodPost && r.URL.Path == "/"+tenant+"/oauth2/v2.0/token":
			_ = r.ParseForm()
			a.mu.Lock()
			a.grants = append(a.grants, r.PostForm)
			tok := a.next
			a.mu.Unlock()
			if r.PostForm.Get("client_id") != clientID || r.PostForm.Get("client_secret") != secret {
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = io.WriteString(w, `{"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided."}`)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"token_type": "Bearer", "expires_in": 3600, "access_token": tok})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// credential is a client secret credential pointed at the local authority.
func (a *authority) credential(t *testing.T, sec string) azcore.TokenCredential {
	cred, err := azidentity.NewClientSecretCredential(tenant, clientID, sec, &azidentity.ClientSecretCredentialOptions{
		ClientOptions:            azcore.ClientOptions{Cloud: cloud.Configuration{ActiveDirectoryAuthorityHost: a.srv.URL + "/"}, Transport: a.srv.Client()},
		DisableInstanceDiscovery: true})
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

// azureServer is an Azure OpenAI deployment route that answers only a
// request bearing want, with no api-key header.
func azureServer(t *testing.T, want string) (*httptest.Server, *[]*http.Request) {
	var mu sync.Mutex
	var got []*http.Request
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("Authorization") != "Bearer "+want || r.Header.Get("api-key") != "" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint."}}`)
			return
		}
		_, _ = io.WriteString(w, `{"id":"c1","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

// With Entra ID, the client gets a token from the authority with the
// client secret for Azure AI services' scope, sends it as a bearer token
// (no api-key), and reuses the cached token for the next request.
func TestEntraIDBearerToken(t *testing.T) {
	a := newAuthority(t)
	srv, got := azureServer(t, "entra-token-1")
	c, err := azure.New(azure.Config{Endpoint: srv.URL, Credential: a.credential(t, secret)})
	if err != nil {
		t.Fatal(err)
	}
	req := llm.Request{Model: "gpt4o-prod", Messages: []llm.Message{llm.UserMessage("hello")}}
	for range 2 {
		resp, err := c.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text() != "hi" {
			t.Fatalf("answer %q", resp.Text())
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.grants) != 1 {
		t.Fatalf("%d token grants for two requests, want 1 (the token is cached)", len(a.grants))
	}
	g := a.grants[0]
	if g.Get("grant_type") != "client_credentials" || !strings.Contains(g.Get("scope"), azure.EntraScope) {
		t.Errorf("grant %v: want client_credentials for %s", g, azure.EntraScope)
	}
	if p := (*got)[0].URL.EscapedPath(); p != "/openai/deployments/gpt4o-prod/chat/completions" {
		t.Errorf("path %s", p)
	}
}

// A credential the authority refuses fails the call as an authentication
// error before anything reaches the deployment.
func TestEntraIDRefused(t *testing.T) {
	a := newAuthority(t)
	srv, got := azureServer(t, "entra-token-1")
	c, err := azure.New(azure.Config{Endpoint: srv.URL, Credential: a.credential(t, "wrong-secret")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), llm.Request{Model: "d", Messages: []llm.Message{llm.UserMessage("hello")}})
	var le *llm.Error
	if !errors.As(err, &le) || le.Kind != llm.ErrAuthentication || !strings.Contains(err.Error(), "Entra ID token") {
		t.Fatalf("err %v, want ErrAuthentication about the Entra ID token", err)
	}
	if len(*got) != 0 {
		t.Fatalf("%d requests reached the deployment without a token", len(*got))
	}
}

// Config: key and credential together, neither, or a token over plain
// HTTP to a remote host are refused with what to do.
func TestEntraIDConfig(t *testing.T) {
	a := newAuthority(t)
	cred := a.credential(t, secret)
	for _, c := range []struct {
		cfg  azure.Config
		want string
	}{
		{azure.Config{Endpoint: "https://r.openai.azure.com", APIKey: "k", Credential: cred}, "not both"},
		{azure.Config{Endpoint: "https://r.openai.azure.com"}, "Entra ID"},
		{azure.Config{Endpoint: "http://r.openai.azure.com", Credential: cred}, "only over TLS"},
	} {
		if _, err := azure.New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want %q", c.cfg, err, c.want)
		}
	}
}
