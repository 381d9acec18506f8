package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/viper"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
)

// TestServeConfigOIDC: the oidc section decodes from a file, mappings
// and durations included, and an incomplete one names the missing key.
func TestServeConfigOIDC(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		f := filepath.Join(dir, "serve.yaml")
		if err := os.WriteFile(f, []byte("database_url: x.db\ntoken: tk\n"+body), 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	cfg, err := cli.Load[ServeConfig](viper.New(), write(`oidc:
  issuer: https://git.example.com/
  client_id: agentfleet
  client_secret_file: /run/secrets/oidc
  redirect_url: https://fleet.example.com/auth/callback
  default_tenant: web
  session_ttl: 2h
  mappings:
    - {value: "acme:leads", tenant: web, role: approver}
    - {claim: email, value: ops@example.com, tenant: "*", role: admin}
`))
	if err != nil {
		t.Fatal(err)
	}
	o := cfg.OIDC
	if !o.Enabled() || o.ClientID != "agentfleet" || o.SessionTTL != 2*time.Hour || len(o.Mappings) != 2 ||
		o.Mappings[0].Value != "acme:leads" || o.Mappings[1].Claim != "email" || o.Mappings[1].Tenant != "*" {
		t.Fatalf("oidc = %+v", o)
	}
	_, err = cli.Load[ServeConfig](viper.New(), write("oidc: {issuer: https://git.example.com/, client_id: c, redirect_url: https://f.example.com/auth/callback}\n"))
	if err == nil || !strings.Contains(err.Error(), "oidc.client_secret_file is required") {
		t.Fatalf("an oidc section without its secret file: %v", err)
	}
}
