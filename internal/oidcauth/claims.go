package oidcauth

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/agentfleet/agentfleet/internal/identity"
)

// claims are the claims of an ID token or a userinfo answer, raw.
type claims map[string]json.RawMessage

// str returns the string claim name, "" when absent or not a string.
func (c claims) str(name string) string {
	var s string
	_ = json.Unmarshal(c[name], &s)
	return s
}

// values returns the claim name as a list: a string is a list of one, a
// list keeps its strings, anything else is empty.
func (c claims) values(name string) []string {
	raw, ok := c[name]
	if !ok {
		return nil
	}
	var list []any
	if json.Unmarshal(raw, &list) == nil {
		var out []string
		for _, v := range list {
			if s, ok := v.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	var one any
	if json.Unmarshal(raw, &one) != nil {
		return nil
	}
	switch v := one.(type) {
	case string:
		return []string{v}
	case bool, float64:
		return []string{fmt.Sprint(v)}
	}
	return nil
}

// principal maps the claims of issuer's user to a principal by the
// mappings, or says why the user may not sign in.
func (c Config) principal(cl claims) (identity.Principal, error) {
	sub := cl.str("sub")
	if sub == "" {
		return identity.Principal{}, fmt.Errorf("the provider's claims carry no subject (sub)")
	}
	p := identity.Principal{ID: principalID(c.Issuer, sub), Name: displayName(cl, sub), Grants: map[string]identity.Role{}}
	for _, m := range c.Mappings {
		claim := m.Claim
		if claim == "" {
			claim = c.GroupsClaim
		}
		if !slices.Contains(cl.values(claim), m.Value) {
			continue
		}
		role := identity.Role(m.Role)
		if have := p.Grants[m.Tenant]; have == "" || role.Includes(have) {
			p.Grants[m.Tenant] = role
		}
	}
	if len(p.Grants) == 0 {
		return identity.Principal{}, fmt.Errorf("%s has no role in any tenant: no oidc.mappings entry matches their claims (%s: %s); ask an operator to map one of them",
			p.Name, c.GroupsClaim, strings.Join(cl.values(c.GroupsClaim), ", "))
	}
	p.DefaultTenant = defaultTenant(p, c.DefaultTenant)
	return p, nil
}

// principalID is "oidc:<subject>@<issuer host and path>": the subject is
// unique only within its issuer.
func principalID(issuer, sub string) string {
	host := issuer
	if u, err := url.Parse(issuer); err == nil {
		host = strings.TrimSuffix(u.Host+u.Path, "/")
	}
	return "oidc:" + sub + "@" + host
}

// displayName is the user's name for people: name, preferred_username,
// email, or the subject.
func displayName(cl claims, sub string) string {
	for _, k := range []string{"name", "preferred_username", "email"} {
		if s := cl.str(k); s != "" {
			return s
		}
	}
	return sub
}

// defaultTenant is want when p has a grant there (or in every tenant),
// else the first tenant p has a grant in, else want.
func defaultTenant(p identity.Principal, want string) string {
	if want != "" && p.RoleIn(want) != "" {
		return want
	}
	if ts, _ := p.Tenants(); len(ts) > 0 {
		return ts[0]
	}
	return want
}
