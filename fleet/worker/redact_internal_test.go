package worker

import "testing"

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
	if got := urlPassword("postgres://fleet:pw-123@db/fleet"); got != "pw-123" {
		t.Errorf("urlPassword = %q", got)
	}
	if got := urlPassword("https://user@example.com/x"); got != "" {
		t.Errorf("a URL without a password: %q", got)
	}
}
