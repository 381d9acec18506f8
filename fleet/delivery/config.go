package delivery

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/delivery/forge"
)

// Config is a worker's delivery configuration (the worker's "delivery"
// key).
type Config struct {
	// Tokens maps the token references specs name
	// (delivery.credentials.token) to tokens on this worker.
	Tokens map[string]Token `mapstructure:"tokens"`
	// TaskURL is the link to a task in a pull request's body, with
	// {task_id} replaced ("" = the task id alone).
	TaskURL string `mapstructure:"task_url"`
	// DeliveryScope (delivery.repos, delivery.branches) is what a
	// delivery naming no credentials may push to with the worker's own
	// git access: by default any repository and the branches agentfleet/*.
	fleet.DeliveryScope `mapstructure:",squash"`
}

// Token is an HTTPS token of a forge: for pushes over HTTPS to its hosts,
// and for its REST API.
type Token struct {
	// TokenFile or TokenEnv holds the token (read at each use).
	TokenFile string `mapstructure:"token_file"`
	TokenEnv  string `mapstructure:"token_env"`
	// Username goes with the token in HTTP basic auth for git (default
	// "x-access-token"; GitLab wants "oauth2", Gitea the token's owner).
	Username string `mapstructure:"username"`
	// Forge is the forge's kind: gitea, forgejo, github or gitlab.
	Forge string `mapstructure:"forge"`
	// APIURL is the forge's REST root ("" = GitHub's or GitLab's public one).
	APIURL string `mapstructure:"api_url"`
	// Hosts are the git hosts (host or host:port) the token may be sent to;
	// default the host of APIURL (for github, also github.com).
	Hosts []string `mapstructure:"hosts"`
	// DeliveryScope (repos, branches) is what a delivery may push with the
	// token: by default any repository on Hosts and the branches
	// agentfleet/*.
	fleet.DeliveryScope `mapstructure:",squash"`
}

// SSHKey is what an ssh_key reference resolves to on a worker.
type SSHKey struct {
	KeyFile        string // "" offers the keys of the agent at SSH_AUTH_SOCK
	KnownHostsFile string // "" = ~/.ssh/known_hosts
	// Scope is what a delivery may push with the key.
	Scope fleet.DeliveryScope
}

// Credentials resolves the references of a spec on the worker.
type Credentials interface {
	SSHKey(ref string) (SSHKey, bool)
	Token(ref string) (Token, bool)
}

// Validate reports every invalid token configuration, naming its key.
func (c Config) Validate() error {
	for ref, t := range c.Tokens {
		key := "delivery.tokens." + ref
		switch {
		case ref == "":
			return fmt.Errorf("delivery.tokens has an empty reference")
		case (t.TokenFile == "") == (t.TokenEnv == ""):
			return fmt.Errorf("%s needs exactly one of token_file or token_env", key)
		case t.Forge != "" && !slices.Contains(forge.Kinds, t.Forge):
			return fmt.Errorf("%s.forge %q is unknown, want one of %s", key, t.Forge, strings.Join(forge.Kinds, ", "))
		case t.Forge != "" && t.APIURL == "" && forge.DefaultAPIURL(t.Forge) == "":
			return fmt.Errorf("%s.api_url is required for forge %q (such as https://forge.example/api/v1)", key, t.Forge)
		}
		if err := t.DeliveryScope.Validate(key); err != nil {
			return err
		}
	}
	return c.DeliveryScope.Validate("delivery")
}

// Secrets reads every token this configuration names, by its key
// (delivery.tokens.<ref>), so that a worker can redact them; a token that
// cannot be read is left out (its delivery fails on its own).
func (c Config) Secrets() map[string]string {
	out := map[string]string{}
	for ref, t := range c.Tokens {
		if v, err := t.secret(); err == nil {
			out["delivery.tokens."+ref] = v
		}
	}
	return out
}

// secret reads the token.
func (t Token) secret() (string, error) {
	if t.TokenEnv != "" {
		v := os.Getenv(t.TokenEnv)
		if v == "" {
			return "", fmt.Errorf("environment variable %s is empty", t.TokenEnv)
		}
		return v, nil
	}
	b, err := os.ReadFile(t.TokenFile)
	if err != nil {
		return "", fmt.Errorf("reading the token file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// apiURL is the forge's REST root.
func (t Token) apiURL() string {
	if t.APIURL != "" {
		return t.APIURL
	}
	return forge.DefaultAPIURL(t.Forge)
}

// mayReach reports whether the token may be sent to host.
func (t Token) mayReach(host string) bool {
	hosts := t.Hosts
	if len(hosts) == 0 {
		if u, err := url.Parse(t.apiURL()); err == nil && u.Host != "" {
			hosts = append(hosts, u.Host, strings.TrimPrefix(u.Host, "api."))
		}
	}
	return slices.ContainsFunc(hosts, func(h string) bool { return strings.EqualFold(h, host) })
}

func (t Token) username() string {
	if t.Username != "" {
		return t.Username
	}
	return "x-access-token"
}
