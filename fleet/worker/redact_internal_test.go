package worker

import (
	"slices"
	"testing"

	"github.com/agentfleet/agentfleet/execenv"
)

func TestSecretEnvName(t *testing.T) {
	for name, want := range map[string]bool{
		"ANTHROPIC_API_KEY": true, "AWS_SECRET_ACCESS_KEY": true, "PGPASSWORD": true, "GITHUB_PAT": true,
		"AGENTFLEET_NATS_TOKEN": true, "DEPLOY_KEY": true, "SSH_PASSPHRASE": true, "client_secret": true,
		"PATH": false, "HOME": false, "AWS_ACCESS_KEY_ID": false, "GITHUB_TOKEN_FILE": false,
		"AGENTFLEET_NATS_TLS_KEY_FILE": false, "SECRETS_DIR": false, "SSH_AUTH_SOCK": false,
	} {
		if got := secretEnvName(name); got != want {
			t.Errorf("secretEnvName(%s) = %v, want %v", name, got, want)
		}
	}
	if got := execenv.URLPasswords("postgres://fleet:pw-123@db/fleet"); !slices.Equal(got, []string{"pw-123"}) {
		t.Errorf("URLPasswords = %q", got)
	}
	if got := execenv.URLPasswords("https://user@example.com/x"); got != nil {
		t.Errorf("a URL without a password: %q", got)
	}
}
