package oidcauth

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/internal/identity"
)

// Config is the dispatcher's oidc: section (docs/operations.md, "Single
// sign-on"). Single sign-on is on when Issuer is set.
type Config struct {
	// Issuer is the provider's issuer URL exactly as its discovery
	// document (<issuer>/.well-known/openid-configuration) states it;
	// Gitea's is its ROOT_URL with the trailing slash.
	Issuer string `mapstructure:"issuer"`
	// ClientID is the OAuth2 client registered at the provider for the
	// dispatcher; ID tokens must name it in their audience.
	ClientID string `mapstructure:"client_id"`
	// ClientSecretFile is the file holding the client's secret (the
	// secret itself is never in the configuration).
	ClientSecretFile string `mapstructure:"client_secret_file"`
	// RedirectURL is where the provider sends the browser back: the
	// dispatcher's /auth/callback as users reach it
	// ("https://fleet.example.com/auth/callback"). Cookies are Secure when
	// it is https.
	RedirectURL string `mapstructure:"redirect_url"`
	// Scopes asked for at login; default openid, profile, email, groups.
	// openid is always asked for.
	Scopes []string `mapstructure:"scopes"`
	// GroupsClaim is the claim a mapping without a claim of its own
	// matches; default "groups".
	GroupsClaim string `mapstructure:"groups_claim"`
	// Mappings grant roles in tenants to users whose claims match. A user
	// holds the highest role any matching mapping gives per tenant; a user
	// no mapping matches is refused.
	Mappings []Mapping `mapstructure:"mappings"`
	// DefaultTenant is where a user's submissions naming no tenant go,
	// when the user has a grant there; otherwise the first of its tenants
	// in order.
	DefaultTenant string `mapstructure:"default_tenant"`
	// AcceptAccessTokens lets API clients send the provider's access
	// tokens as bearer tokens, checked at its userinfo endpoint. Off by
	// default: an access token does not say which client it was issued
	// to, so any application of the provider could present one; ID
	// tokens (always accepted) name this client in their audience.
	AcceptAccessTokens bool `mapstructure:"accept_access_tokens"`
	// SessionKeyFile holds the key dashboard session cookies are sealed
	// with (at least 32 bytes, e.g. `openssl rand -base64 48`). Unset, a
	// key is generated at start: a restart then logs every user out, and
	// several dispatchers behind one name need a shared file.
	SessionKeyFile string `mapstructure:"session_key_file"`
	// SessionTTL is how long a dashboard login lasts; default 8 h.
	SessionTTL time.Duration `mapstructure:"session_ttl"`

	// AllowPrivate are the special addresses (loopback, private) the
	// provider may be at: the dispatcher's outbound_allow_private.
	AllowPrivate []netip.Prefix `mapstructure:"-"`
	// Now is the clock tokens and sessions are judged by; default
	// time.Now.
	Now func() time.Time `mapstructure:"-"`
}

// Mapping grants Role in Tenant to users whose Claim holds Value (equals
// it, or for a list claim such as groups, contains it).
type Mapping struct {
	Claim  string `mapstructure:"claim"` // default: the config's groups_claim
	Value  string `mapstructure:"value"`
	Tenant string `mapstructure:"tenant"` // or "*" for every tenant
	Role   string `mapstructure:"role"`   // viewer, submitter, approver, admin
}

// DefaultSessionTTL is how long a dashboard login lasts by default.
const DefaultSessionTTL = 8 * time.Hour

// Enabled reports whether single sign-on is configured.
func (c Config) Enabled() bool { return c.Issuer != "" }

// WithDefaults fills the zero fields.
func (c Config) WithDefaults() Config {
	if len(c.Scopes) == 0 {
		c.Scopes = []string{"openid", "profile", "email", "groups"}
	}
	if !slices.Contains(c.Scopes, "openid") {
		c.Scopes = append([]string{"openid"}, c.Scopes...)
	}
	if c.GroupsClaim == "" {
		c.GroupsClaim = "groups"
	}
	if c.SessionTTL == 0 {
		c.SessionTTL = DefaultSessionTTL
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Validate names the first key that is wrong and what to do (keys as
// under oidc: in the dispatcher's configuration).
func (c Config) Validate() error {
	if !c.Enabled() {
		return nil
	}
	if err := checkURL("oidc.issuer", c.Issuer); err != nil {
		return err
	}
	switch {
	case c.ClientID == "":
		return errors.New("oidc.client_id is required: the client id of the OAuth2 application registered for the dispatcher at the provider")
	case c.ClientSecretFile == "":
		return errors.New("oidc.client_secret_file is required: a file holding the application's client secret (the secret is never put in the configuration)")
	case c.RedirectURL == "":
		return errors.New("oidc.redirect_url is required: the dispatcher's /auth/callback as browsers reach it, e.g. https://fleet.example.com/auth/callback")
	case len(c.Mappings) == 0:
		return errors.New("oidc.mappings is empty: map at least one claim value to a tenant and role ({value: my-org, tenant: my-team, role: submitter}), or nobody can log in")
	case c.SessionTTL < 0:
		return fmt.Errorf("oidc.session_ttl must be positive, got %s", c.SessionTTL)
	}
	if err := checkURL("oidc.redirect_url", c.RedirectURL); err != nil {
		return err
	}
	if u, _ := url.Parse(c.RedirectURL); u.Path != CallbackPath {
		return fmt.Errorf("oidc.redirect_url %q must end in %s (the path the dispatcher serves the login's return on)", c.RedirectURL, CallbackPath)
	}
	for i, m := range c.Mappings {
		if m.Value == "" || m.Tenant == "" {
			return fmt.Errorf("oidc.mappings[%d]: value and tenant are required ({claim: groups, value: my-org:admins, tenant: my-team, role: admin})", i)
		}
		if _, err := identity.ParseRole(m.Role); err != nil {
			return fmt.Errorf("oidc.mappings[%d].role: %w", i, err)
		}
	}
	return nil
}

func checkURL(key, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%s %q must be an http(s) URL with a host", key, raw)
	}
	return nil
}

// readSecretFile returns the trimmed content of the file key names.
func readSecretFile(key, path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", key, err)
	}
	b = []byte(strings.TrimSpace(string(b)))
	if len(b) == 0 {
		return nil, fmt.Errorf("%s %s is empty", key, path)
	}
	return b, nil
}
