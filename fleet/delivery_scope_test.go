package fleet

import (
	"strings"
	"testing"

	"github.com/google/uuid"
)

func TestRepoKey(t *testing.T) {
	for remote, want := range map[string]string{
		"https://x-access-token@GitHub.com/octo/hello.git": "github.com/octo/hello",
		"https://github.com:443/octo/hello/":               "github.com/octo/hello",
		"ssh://git@github.com:22/octo/hello.git":           "github.com/octo/hello",
		"git@github.com:octo/hello.git":                    "github.com/octo/hello",
		"http://git.example.com:3000/team/app":             "git.example.com:3000/team/app",
		"https://github.com/octo/x/../../evil/repo":        "github.com/evil/repo",
		"/srv/git/hello.git":                               "/srv/git/hello",
		"file:///srv/git/hello":                            "/srv/git/hello",
		"relative/path":                                    "",
		"":                                                 "",
	} {
		if got := RepoKey(remote); got != want {
			t.Errorf("RepoKey(%q) = %q, want %q", remote, got, want)
		}
	}
}

// A scope allows the default branches unless it names others, and the
// repositories it lists by path components; a check names the field and
// the credential.
func TestDeliveryScopesCheck(t *testing.T) {
	scopes := DeliveryScopes{
		Tokens: map[string]DeliveryScope{"bot": {Repos: []string{"github.com/octo", "https://git.example.com/team/app.git"}},
			"team-a-bot": {Tenants: []string{"team-a"}}},
		SSHKeys: map[string]DeliveryScope{"deploy": {Repos: []string{"/srv/git/"},
			Branches: []string{"agentfleet/*", "release/*"}}},
	}
	token := DeliveryCredentials{Token: "bot"}
	const repo = "https://github.com/octo/hello.git"
	for _, c := range []struct {
		name  string
		d     Delivery
		repo  string
		field string // "" = allowed
		msg   string
	}{
		{"default branch, no credentials", Delivery{}, repo, "", ""},
		{"main, no credentials", Delivery{Branch: "main"}, repo, "spec.delivery.branch", `"main" is not a branch a delivery without credentials may push to (allowed: agentfleet/*)`},
		{"main with a token", Delivery{Branch: "main", Credentials: token}, repo, "spec.delivery.branch", `token "bot"`},
		{"nested under agentfleet/", Delivery{Branch: "agentfleet/a/b", Credentials: token}, repo, "spec.delivery.branch", "not a branch"},
		{"the token's owner", Delivery{Credentials: token}, repo, "", ""},
		{"the token's one repository", Delivery{Credentials: token, Remote: "git@git.example.com:team/app"}, repo, "", ""},
		{"beside the token's repository", Delivery{Credentials: token, Remote: "https://git.example.com/team/app-evil"}, repo,
			"spec.delivery.remote", `is not a repository token "bot" may push to (allowed: github.com/octo, https://git.example.com/team/app.git)`},
		{"another owner, by the task's repo", Delivery{Credentials: token}, "https://github.com/octopus/hello", "spec.environment.repo", "is not a repository"},
		{"a prefix that is not a path component", Delivery{Credentials: token, Remote: "https://github.com/octo-evil/x"}, repo, "spec.delivery.remote", ""},
		{"dot-dot out of the owner", Delivery{Credentials: token, Remote: "https://github.com/octo/../evil/x"}, repo, "spec.delivery.remote", ""},
		{"a pull request elsewhere", Delivery{Credentials: token, PullRequest: &PullRequest{Repo: "evil/x"}}, repo, "spec.delivery.pull_request.repo", ""},
		{"the key's release branch", Delivery{Branch: "release/1.2", Credentials: DeliveryCredentials{SSHKey: "deploy"}}, "/srv/git/hello", "", ""},
		{"the key outside its directory", Delivery{Credentials: DeliveryCredentials{SSHKey: "deploy"}}, "/home/other/hello", "spec.environment.repo", `ssh_key "deploy"`},
		{"both: the key refuses", Delivery{Credentials: DeliveryCredentials{SSHKey: "deploy", Token: "bot"}}, repo, "spec.environment.repo", `ssh_key "deploy"`},
	} {
		fe := scopes.Check(c.d, c.repo, uuid.New(), "team-a")
		switch {
		case c.field == "" && fe != nil:
			t.Errorf("%s: refused: %v", c.name, fe)
		case c.field != "" && (fe == nil || fe.Field != c.field || !strings.Contains(fe.Reason, c.msg)):
			t.Errorf("%s: %v, want a refusal of %s saying %q", c.name, fe, c.field, c.msg)
		}
	}
}

// A credential limited to some tenants is refused to the others' tasks,
// naming the credential and the tenants it serves.
func TestDeliveryScopesKeepToTenants(t *testing.T) {
	scopes := DeliveryScopes{Tokens: map[string]DeliveryScope{"team-a-bot": {Tenants: []string{"team-a"}}}}
	d := Delivery{Credentials: DeliveryCredentials{Token: "team-a-bot"}}
	const repo = "https://github.com/octo/hello.git"
	if fe := scopes.Check(d, repo, uuid.New(), "team-a"); fe != nil {
		t.Fatalf("team-a's token refused to team-a: %v", fe)
	}
	fe := scopes.Check(d, repo, uuid.New(), "team-b")
	if fe == nil || fe.Field != "spec.delivery.credentials.token" ||
		!strings.Contains(fe.Reason, `token "team-a-bot" may not be used by a task of tenant "team-b" (its tenants: team-a)`) {
		t.Fatalf("team-a's token for team-b: %v", fe)
	}
	if fe := (DeliveryScopes{}).Check(d, repo, uuid.New(), "team-b"); fe != nil {
		t.Fatalf("a token without tenants refused: %v", fe)
	}
}

func TestDeliveryScopeValidate(t *testing.T) {
	for _, c := range []struct {
		s    DeliveryScope
		want string
	}{
		{DeliveryScope{Repos: []string{"relative"}}, ""},
		{DeliveryScope{Repos: []string{""}}, `x.repos[0] "" is not a repository`},
		{DeliveryScope{Branches: []string{"[oops"}}, `x.branches[0] "[oops" is not a branch pattern`},
	} {
		err := c.s.Validate("x")
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%+v: %v, want %q", c.s, err, c.want)
		}
	}
}
