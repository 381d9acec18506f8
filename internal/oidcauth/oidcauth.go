package oidcauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/agentfleet/agentfleet/internal/identity"
	"github.com/agentfleet/agentfleet/internal/outbound"
)

// Auth is single sign-on with one OpenID provider: the login flow
// (Handler), and the Authenticators for its tokens and for dashboard
// sessions. It is safe for concurrent use.
type Auth struct {
	cfg      Config
	client   *http.Client
	provider *oidc.Provider
	verifier *oidc.IDTokenVerifier
	oauth    oauth2.Config
	seal     *sealer
	secure   bool // cookies are Secure: the redirect URL is https

	mu       sync.Mutex
	userinfo map[[32]byte]cachedPrincipal
}

type cachedPrincipal struct {
	p       identity.Principal
	expires time.Time
}

// userinfoTTL is how long an access token's userinfo answer is reused;
// userinfoCacheMax bounds the entries kept.
const (
	userinfoTTL      = time.Minute
	userinfoCacheMax = 4096
)

// New reads the client secret and the session key, and fetches the
// provider's discovery document (so the provider must answer when the
// dispatcher starts). cfg must be Enabled and valid.
func New(ctx context.Context, cfg Config) (*Auth, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if !cfg.Enabled() {
		return nil, errors.New("oidc.issuer is not set")
	}
	secret, err := readSecretFile("oidc.client_secret_file", cfg.ClientSecretFile)
	if err != nil {
		return nil, err
	}
	var key []byte
	if cfg.SessionKeyFile != "" {
		if key, err = readSecretFile("oidc.session_key_file", cfg.SessionKeyFile); err != nil {
			return nil, err
		}
	}
	s, err := newSealer(key)
	if err != nil {
		return nil, err
	}
	client := outbound.Client(outbound.Policy{Allow: outbound.AnyURL(), AllowPrivate: cfg.AllowPrivate, Timeout: 20 * time.Second})
	pctx := oidc.ClientContext(context.WithoutCancel(ctx), client)
	provider, err := oidc.NewProvider(pctx, cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("oidc.issuer %s: discovery: %v (is the provider up, and is the issuer spelt as its "+
			"/.well-known/openid-configuration says, trailing slash included? a provider on a private address needs outbound_allow_private)", cfg.Issuer, err)
	}
	a := &Auth{cfg: cfg, client: client, provider: provider, seal: s, userinfo: map[[32]byte]cachedPrincipal{},
		verifier: provider.VerifierContext(pctx, &oidc.Config{ClientID: cfg.ClientID, Now: cfg.Now}),
		oauth: oauth2.Config{ClientID: cfg.ClientID, ClientSecret: string(secret), Endpoint: provider.Endpoint(),
			RedirectURL: cfg.RedirectURL, Scopes: cfg.Scopes}}
	if u, _ := url.Parse(cfg.RedirectURL); u.Scheme == "https" {
		a.secure = true
	}
	return a, nil
}

// Authenticators are the bearer token authenticator and the dashboard
// session one, for the dispatcher's APIOptions.
func (a *Auth) Authenticators() []identity.Authenticator {
	return []identity.Authenticator{Bearer{a}, Session{a}}
}

// Bearer authenticates "Authorization: Bearer <token>" carrying a JWT:
// an ID token of the provider for this client, or (with
// accept_access_tokens) an access token of the provider, checked at its
// userinfo endpoint. A bearer that is not a JWT is not its kind (API
// tokens are asked next); a JWT naming another issuer, expired, with a
// bad signature or for another audience is refused.
type Bearer struct{ a *Auth }

// Authenticate implements identity.Authenticator.
func (b Bearer) Authenticate(r *http.Request) (identity.Principal, bool, error) {
	tok, ok := bearer(r)
	if !ok {
		return identity.Principal{}, false, nil
	}
	payload, ok := jwtPayload(tok)
	if !ok {
		return identity.Principal{}, false, nil
	}
	var head struct {
		Iss string          `json:"iss"`
		Aud json.RawMessage `json:"aud"`
	}
	_ = json.Unmarshal(payload, &head)
	switch {
	case head.Iss != "":
		return b.a.idToken(r.Context(), tok)
	case b.a.cfg.AcceptAccessTokens:
		return b.a.accessToken(r.Context(), tok)
	default:
		return identity.Principal{}, false, nil
	}
}

// idToken verifies an ID token: issuer, audience, expiry, signature.
func (a *Auth) idToken(ctx context.Context, raw string) (identity.Principal, bool, error) {
	t, err := a.verifier.Verify(ctx, raw)
	if err != nil {
		return identity.Principal{}, true, fmt.Errorf("the OpenID Connect token is not valid for this dispatcher: %v", err)
	}
	var cl claims
	if err := t.Claims(&cl); err != nil {
		return identity.Principal{}, true, err
	}
	p, err := a.cfg.principal(cl)
	return p, true, err
}

// accessToken asks the provider's userinfo endpoint who the access token
// is, reusing an answer for userinfoTTL.
func (a *Auth) accessToken(ctx context.Context, raw string) (identity.Principal, bool, error) {
	key := sha256.Sum256([]byte(raw))
	now := a.cfg.Now()
	a.mu.Lock()
	c, hit := a.userinfo[key]
	a.mu.Unlock()
	if hit && now.Before(c.expires) {
		return c.p, true, nil
	}
	info, err := a.provider.UserInfo(oidc.ClientContext(ctx, a.client), oauth2.StaticTokenSource(&oauth2.Token{AccessToken: raw}))
	if err != nil {
		return identity.Principal{}, true, fmt.Errorf("the provider does not accept the access token: %v", err)
	}
	var cl claims
	if err := info.Claims(&cl); err != nil {
		return identity.Principal{}, true, err
	}
	p, err := a.cfg.principal(cl)
	if err != nil {
		return identity.Principal{}, true, err
	}
	a.mu.Lock()
	if len(a.userinfo) >= userinfoCacheMax {
		clear(a.userinfo)
	}
	a.userinfo[key] = cachedPrincipal{p: p, expires: now.Add(userinfoTTL)}
	a.mu.Unlock()
	return p, true, nil
}

// bearer returns the token of the request's Authorization header.
func bearer(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	tok = strings.TrimSpace(tok)
	return tok, ok && strings.EqualFold(scheme, "Bearer") && tok != ""
}

// jwtPayload returns the decoded (unverified) payload of a compact JWS.
func jwtPayload(tok string) ([]byte, bool) {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return nil, false
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || !json.Valid(b) {
		return nil, false
	}
	return b, true
}

// Session authenticates the dashboard's session cookie, set by the
// login flow. A request without it, or with an Authorization header
// (the caller's chosen credential wins), is not its kind; a cookie that is
// expired, forged or sealed with another key is refused (the dashboard
// then offers to log in again). A cookie-authenticated request that
// changes something must come from the dispatcher's own origin.
type Session struct{ a *Auth }

// Authenticate implements identity.Authenticator.
func (s Session) Authenticate(r *http.Request) (identity.Principal, bool, error) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || r.Header.Get("Authorization") != "" { // no cookie, or a token the caller chose wins over it
		return identity.Principal{}, false, nil //nolint:nilerr // no session cookie is no credential of this kind
	}
	var p identity.Principal
	if err := s.a.seal.open(SessionCookie, c.Value, s.a.cfg.Now(), &p); err != nil {
		return identity.Principal{}, true, fmt.Errorf("the dashboard session is %v (a restart without oidc.session_key_file ends every session): log in again at %s", err, LoginPath)
	}
	if err := sameOrigin(r); err != nil {
		return identity.Principal{}, true, err
	}
	return p, true, nil
}

// sameOrigin refuses a state-changing request that a browser says came
// from another site or origin: the session cookie must not lend its
// authority to another page (SameSite=Lax does not separate ports).
func sameOrigin(r *http.Request) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" {
		return fmt.Errorf("a %s with the dashboard's session cookie must come from the dashboard itself (Sec-Fetch-Site: %s)", r.Method, s)
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return fmt.Errorf("a %s with the dashboard's session cookie must come from the dashboard itself (Origin %s, Host %s)", r.Method, o, r.Host)
		}
	}
	return nil
}
