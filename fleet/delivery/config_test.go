package delivery_test

import (
	"strings"
	"testing"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/delivery"
)

// TestConfigValidate: a token needs one source, a known forge and, for a
// self-hosted forge, its API root; each error names the key.
func TestConfigValidate(t *testing.T) {
	ok := delivery.Config{Tokens: map[string]delivery.Token{
		"gh":   {TokenEnv: "GH_TOKEN", Forge: "github"},
		"gt":   {TokenFile: "/run/token", Forge: "gitea", APIURL: "https://git.example.com/api/v1"},
		"push": {TokenEnv: "PUSH_TOKEN"},
	}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		token delivery.Token
		want  string
	}{
		{delivery.Token{Forge: "github"}, "delivery.tokens.x needs exactly one of token_file or token_env"},
		{delivery.Token{TokenEnv: "A", TokenFile: "/b"}, "delivery.tokens.x needs exactly one of token_file or token_env"},
		{delivery.Token{TokenEnv: "A", Forge: "bitbucket"}, `delivery.tokens.x.forge "bitbucket" is unknown`},
		{delivery.Token{TokenEnv: "A", Forge: "forgejo"}, "delivery.tokens.x.api_url is required for forge \"forgejo\""},
		{delivery.Token{TokenEnv: "A", DeliveryScope: fleet.DeliveryScope{Branches: []string{"[x"}}}, `delivery.tokens.x.branches[0] "[x" is not a branch pattern`},
		{delivery.Token{TokenEnv: "A", DeliveryScope: fleet.DeliveryScope{Repos: []string{""}}}, `delivery.tokens.x.repos[0] "" is not a repository`},
	} {
		err := delivery.Config{Tokens: map[string]delivery.Token{"x": tc.token}}.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.token, err, tc.want)
		}
	}
	bad := delivery.Config{DeliveryScope: fleet.DeliveryScope{Branches: []string{"[x"}}}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), `delivery.branches[0] "[x"`) {
		t.Errorf("a bad delivery.branches: %v", err)
	}
}
