package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/viper"

	"github.com/agentfleet/agentfleet/cmd/internal/cli"
)

// TestServeConfigForges: every forge setting is read from the file,
// the template inline or from spec_file (whose map keys keep their
// case); an unknown key, a missing secret and a collaborators rule
// without a token are refused naming the key.
func TestServeConfigForges(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.json")
	if err := os.WriteFile(spec, []byte(`{"profile":"openai","labels":{"Team":"A"},"delivery":{"credentials":{"token":"gl"},"pull_request":{}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "serve.yaml")
	write := func(yaml string) {
		t.Helper()
		if err := os.WriteFile(file, []byte("database_url: x.db\ntoken: tk\n"+yaml), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`forges:
  gitea:
    kind: gitea
    secret_file: /etc/agentfleet/gitea-hook
    api_url: https://git.example.com/api/v1
    token_env: GITEA_TOKEN
    tenant: team-a
    label: fleet
    mention: /fleet
    max_ci_repairs: 5
    triggers: {users: [alice, bob], collaborators: true}
    spec: {profile: anthropic, checks: [{name: test, command: make test}]}
  gitlab:
    kind: gitlab
    secret_env: GITLAB_HOOK_SECRET
    spec_file: ` + spec + "\n")
	cfg, err := cli.Load[ServeConfig](viper.New(), file)
	if err != nil {
		t.Fatal(err)
	}
	forges, err := cfg.forgeConfigs()
	if err != nil {
		t.Fatal(err)
	}
	g, l := forges["gitea"], forges["gitlab"]
	if g.Kind != "gitea" || g.SecretFile != "/etc/agentfleet/gitea-hook" || g.APIURL != "https://git.example.com/api/v1" ||
		g.TokenEnv != "GITEA_TOKEN" || g.Tenant != "team-a" || g.Label != "fleet" || g.Mention != "/fleet" || g.MaxCIRepairs != 5 ||
		strings.Join(g.Triggers.Users, ",") != "alice,bob" || !g.Triggers.Collaborators ||
		g.Spec.Profile != "anthropic" || len(g.Spec.Checks) != 1 || g.Spec.Checks[0].Command != "make test" {
		t.Errorf("gitea forge read as %+v", g)
	}
	if l.Kind != "gitlab" || l.SecretEnv != "GITLAB_HOOK_SECRET" || l.Spec.Profile != "openai" || l.Spec.Labels["Team"] != "A" ||
		l.Spec.Delivery == nil || l.Spec.Delivery.Credentials.Token != "gl" {
		t.Errorf("gitlab forge read as %+v (spec %+v)", l, l.Spec)
	}

	for yaml, want := range map[string]string{
		"forges: {gh: {kind: github, secret_env: S, sekret: x}}":                        `unknown field "sekret"`,
		"forges: {gh: {kind: github}}":                                                  "forges.gh needs secret_file or secret_env",
		"forges: {gh: {kind: github, secret_env: S, triggers: {collaborators: true}}}":  "forges.gh.triggers.collaborators needs token_file",
		"forges: {gh: {kind: github, secret_env: S, prompt: '{{.Title'}}":               "forges.gh.prompt is not a template",
		"forges: {gh: {kind: bitbucket, secret_env: S}}":                                `forges.gh.kind "bitbucket"`,
		"forges: {gh: {kind: github, secret_env: S, spec: {profile: x}, spec_file: y}}": "set spec or spec_file, not both",
	} {
		write(yaml + "\n")
		if _, err := cli.Load[ServeConfig](viper.New(), file); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", yaml, err, want)
		}
	}
}
