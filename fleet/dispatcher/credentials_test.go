package dispatcher

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
)

// TestSubmitRefusesUnknownCredentials: with the workers' references listed,
// a delivery naming another is a 400 naming the field, a malformed
// delivery too, and a known one is accepted.
func TestSubmitRefusesUnknownCredentials(t *testing.T) {
	b := setupAPIWith(t, sqliteStore, func(c *Config) {
		c.Credentials = fleet.KnownCredentials{Tokens: []string{"forge-bot"}, SSHKeys: []string{"deploy"}}
	})
	spec := func(d fleet.Delivery) fleet.TaskSpec {
		s := validSpec("deliver")
		s.Environment.Repo = "https://git.example.com/o/r.git"
		s.Delivery = &d
		return s
	}
	for _, c := range []struct {
		name  string
		body  fleet.TaskSpec
		field string
		msg   string
	}{
		{"unknown token", spec(fleet.Delivery{Credentials: fleet.DeliveryCredentials{Token: "other"}}),
			"spec.delivery.credentials.token", `"other" is not a token the workers hold; known: forge-bot`},
		{"unknown key", spec(fleet.Delivery{Credentials: fleet.DeliveryCredentials{SSHKey: "nope"}}),
			"spec.delivery.credentials.ssh_key", `"nope" is not a key the workers hold`},
		{"bad branch", spec(fleet.Delivery{Branch: "a b"}), "spec.delivery.branch", "not a valid git branch name"},
		{"no repository", func() fleet.TaskSpec { s := spec(fleet.Delivery{}); s.Environment.Repo = ""; return s }(),
			"spec.environment.repo", "is required with delivery"},
	} {
		code, detail, raw := b.rawCall(t, http.MethodPost, "/v1/tasks", c.body, testToken)
		if code != http.StatusBadRequest || detail.Code != api.CodeInvalid || detail.Field != c.field || !strings.Contains(detail.Message, c.msg) {
			t.Errorf("%s: %d %s, want 400 on %s saying %q", c.name, code, raw, c.field, c.msg)
		}
	}
	code, _, raw := b.rawCall(t, http.MethodPost, "/v1/tasks", spec(fleet.Delivery{Credentials: fleet.DeliveryCredentials{Token: "forge-bot"},
		PullRequest: &fleet.PullRequest{}}), testToken)
	if code != http.StatusCreated {
		t.Errorf("a delivery with a known token: %d %s", code, raw)
	}
	code, _, raw = b.rawCall(t, http.MethodPost, "/v1/tasks", `{"prompt":"p","checks":[{"name":"t","command":"true"}],"max_repair_rounds":1}`, testToken)
	if code != http.StatusCreated {
		t.Errorf("a spec with checks: %d %s", code, raw)
	}
}

// TestSubmitRefusesDeliveryOutsideScopes: a delivery to a branch no
// scope allows (main, by the default agentfleet/*) or to a repository
// outside its token's is a 400 naming the field, with or without scopes
// configured; one inside them is accepted.
func TestSubmitRefusesDeliveryOutsideScopes(t *testing.T) {
	var b *apiBundle
	spec := func(repo string, d fleet.Delivery) fleet.TaskSpec {
		s := validSpec("deliver")
		s.Environment.Repo = repo
		s.Delivery = &d
		return s
	}
	const repo = "https://git.example.com/team/app.git"
	token := fleet.DeliveryCredentials{Token: "forge-bot"}
	for _, known := range []fleet.KnownCredentials{{}, {Tokens: []string{"forge-bot"}, Scopes: fleet.DeliveryScopes{
		Tokens: map[string]fleet.DeliveryScope{"forge-bot": {Repos: []string{"git.example.com/team"}}}}}} {
		b = setupAPIWith(t, sqliteStore, func(c *Config) { c.Credentials = known }) // a running dispatcher's configuration is not ours to write
		for _, c := range []struct {
			name  string
			body  fleet.TaskSpec
			field string
			msg   string
		}{
			{"main", spec(repo, fleet.Delivery{Branch: "main"}), "spec.delivery.branch",
				`"main" is not a branch a delivery without credentials may push to (allowed: agentfleet/*)`},
			{"main with a token", spec(repo, fleet.Delivery{Branch: "main", Credentials: token}), "spec.delivery.branch",
				`token "forge-bot" may push to`},
		} {
			code, detail, raw := b.rawCall(t, http.MethodPost, "/v1/tasks", c.body, testToken)
			if code != http.StatusBadRequest || detail.Field != c.field || !strings.Contains(detail.Message, c.msg) {
				t.Errorf("%s: %d %s, want 400 on %s saying %q", c.name, code, raw, c.field, c.msg)
			}
		}
	}
	// With the token's repositories listed, a remote elsewhere is refused.
	code, detail, raw := b.rawCall(t, http.MethodPost, "/v1/tasks",
		spec(repo, fleet.Delivery{Remote: "https://git.example.com/other/app.git", Credentials: token}), testToken)
	if code != http.StatusBadRequest || detail.Field != "spec.delivery.remote" ||
		!strings.Contains(detail.Message, `is not a repository token "forge-bot" may push to (allowed: git.example.com/team)`) {
		t.Errorf("a remote outside the token's repositories: %d %s", code, raw)
	}
	code, _, raw = b.rawCall(t, http.MethodPost, "/v1/tasks", spec(repo, fleet.Delivery{Branch: "agentfleet/fix-{short_id}", Credentials: token}), testToken)
	if code != http.StatusCreated {
		t.Errorf("a delivery inside the token's scope: %d %s", code, raw)
	}
}
