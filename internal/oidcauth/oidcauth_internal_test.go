package oidcauth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentfleet/agentfleet/internal/identity"
)

func mustClaims(t *testing.T, s string) claims {
	var c claims
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestPrincipalTakesTheHighestMappedRole(t *testing.T) {
	c := Config{Issuer: "https://git.example.com/", GroupsClaim: "groups", DefaultTenant: "web", Mappings: []Mapping{
		{Value: "acme", Tenant: "web", Role: "viewer"},
		{Value: "acme:leads", Tenant: "web", Role: "approver"},
		{Value: "acme", Tenant: "ops", Role: "submitter"},
		{Claim: "email", Value: "root@example.com", Tenant: identity.AllTenants, Role: "admin"},
	}}
	p, err := c.principal(mustClaims(t, `{"sub":"7","name":"Ada","groups":["acme:leads","acme"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "oidc:7@git.example.com" || p.Name != "Ada" || p.DefaultTenant != "web" ||
		p.Grants["web"] != identity.Approver || p.Grants["ops"] != identity.Submitter || len(p.Grants) != 2 {
		t.Fatalf("principal %+v", p)
	}
	root, err := c.principal(mustClaims(t, `{"sub":"1","email":"root@example.com","preferred_username":"root"}`))
	if err != nil || !root.Can("anything", identity.Admin) || root.Name != "root" || root.DefaultTenant != "web" {
		t.Fatalf("a string claim mapping: %+v, %v", root, err)
	}
	_, err = c.principal(mustClaims(t, `{"sub":"9","preferred_username":"eve","groups":["other"]}`))
	if err == nil || !strings.Contains(err.Error(), "eve has no role") || !strings.Contains(err.Error(), "other") {
		t.Fatalf("an unmapped user: %v", err)
	}
	if _, err := c.principal(mustClaims(t, `{"groups":["acme"]}`)); err == nil {
		t.Fatal("claims without a subject were accepted")
	}
}

func TestDefaultTenantFallsBackToAGrantedOne(t *testing.T) {
	c := Config{Issuer: "https://id.example.com", GroupsClaim: "groups", DefaultTenant: "web",
		Mappings: []Mapping{{Value: "ops", Tenant: "ops", Role: "viewer"}, {Value: "ops", Tenant: "db", Role: "viewer"}}}
	p, err := c.principal(mustClaims(t, `{"sub":"2","groups":"ops"}`))
	if err != nil || p.DefaultTenant != "db" {
		t.Fatalf("default tenant %q (%v), want db: the first granted one, web not being granted", p.DefaultTenant, err)
	}
}

func TestSealerRefusesChangedForeignAndExpired(t *testing.T) {
	s, err := newSealer([]byte(strings.Repeat("k", 32)))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	sealed, err := s.seal(SessionCookie, map[string]string{"id": "oidc:1"}, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]string
	if err := s.open(SessionCookie, sealed, now, &out); err != nil || out["id"] != "oidc:1" {
		t.Fatalf("open = %v %v", out, err)
	}
	if strings.Contains(sealed, "oidc") {
		t.Fatal("the sealed value shows its content")
	}
	b := []byte(sealed)
	b[len(b)/2] ^= 1
	other, _ := newSealer(nil)
	for name, err := range map[string]error{
		"changed":           s.open(SessionCookie, string(b), now, &out),
		"other purpose":     s.open(loginCookie, sealed, now, &out),
		"expired":           s.open(SessionCookie, sealed, now.Add(2*time.Hour), &out),
		"another key":       other.open(SessionCookie, sealed, now, &out),
		"not base64 at all": s.open(SessionCookie, "%%%", now, &out),
	} {
		if err == nil {
			t.Errorf("%s: opened", name)
		}
	}
	if _, err := newSealer([]byte("short")); err == nil {
		t.Error("a 5-byte session key was accepted")
	}
}

func TestConfigValidateNamesTheKey(t *testing.T) {
	ok := Config{Issuer: "https://id.example.com", ClientID: "c", ClientSecretFile: "/run/secret", RedirectURL: "https://fleet.example.com/auth/callback",
		Mappings: []Mapping{{Value: "g", Tenant: "t", Role: "viewer"}}}
	if err := ok.WithDefaults().Validate(); err != nil {
		t.Fatal(err)
	}
	for want, edit := range map[string]func(*Config){
		"oidc.issuer":             func(c *Config) { c.Issuer = "id.example.com" },
		"oidc.client_id":          func(c *Config) { c.ClientID = "" },
		"oidc.client_secret_file": func(c *Config) { c.ClientSecretFile = "" },
		"oidc.redirect_url":       func(c *Config) { c.RedirectURL = "https://fleet.example.com/callback" },
		"oidc.mappings is empty":  func(c *Config) { c.Mappings = nil },
		"oidc.mappings[0].role":   func(c *Config) { c.Mappings = []Mapping{{Value: "g", Tenant: "t", Role: "root"}} },
		"oidc.mappings[0]: value": func(c *Config) { c.Mappings = []Mapping{{Tenant: "t", Role: "viewer"}} },
	} {
		c := ok
		edit(&c)
		if err := c.WithDefaults().Validate(); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
	if (Config{}).Validate() != nil || (Config{}).Enabled() {
		t.Error("an empty oidc section is not simply off")
	}
	if s := ok.WithDefaults().Scopes; strings.Join(s, " ") != "openid profile email groups" {
		t.Errorf("default scopes %v", s)
	}
}

func TestLocalPathStaysOnTheDispatcher(t *testing.T) {
	for in, want := range map[string]string{"/#task=1": "/#task=1", "": "/", "//evil.example": "/", "https://evil.example/": "/",
		"/\\evil.example": "/", "/a\r\nSet-Cookie: x": "/"} {
		if got := localPath(in); got != want {
			t.Errorf("localPath(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSameOriginRefusesCrossSiteWrites(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "http://fleet.example.com/v1/tasks", nil)
	if sameOrigin(r) != nil {
		t.Error("a POST without Origin or Sec-Fetch-Site (a non-browser client) was refused")
	}
	r.Header.Set("Origin", "http://fleet.example.com")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	if err := sameOrigin(r); err != nil {
		t.Errorf("a same-origin POST: %v", err)
	}
	r.Header.Set("Origin", "http://fleet.example.com:8081")
	if sameOrigin(r) == nil {
		t.Error("a POST from another port was accepted")
	}
	r.Header.Set("Origin", "http://fleet.example.com")
	r.Header.Set("Sec-Fetch-Site", "same-site")
	if sameOrigin(r) == nil {
		t.Error("a same-site, cross-origin POST was accepted")
	}
	if sameOrigin(httptest.NewRequest(http.MethodGet, "http://fleet.example.com/v1/tasks", nil)) != nil {
		t.Error("a GET was refused")
	}
}
