package dispatcher

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentfleet/agentfleet/fleet"
	"github.com/agentfleet/agentfleet/fleet/api"
	"github.com/agentfleet/agentfleet/internal/identity"
	"github.com/agentfleet/agentfleet/store"
)

// Authentication turns a request's credential into an identity.Principal
// (see the identity package). The authenticators are asked in turn: the
// bootstrap token of the configuration (APIOptions.Token, principal
// "bootstrap", admin of every tenant), then the API tokens of the store
// (TokenPrefix, principal "token:<id>"), then APIOptions.Authenticators
// (OpenID Connect). The first that recognises the credential decides; one
// that recognises it and refuses it is a 401 without asking the others.
//
// API tokens are 32 random bytes (256 bits), so the store keeps their
// SHA-256 and nothing else: a slow password hash protects guessable
// secrets, and these are not guessable, while a fast hash costs one
// indexed lookup per request. There is no cache: every request reads the
// token's row, so a revocation or an expiry is refused at once by every
// dispatcher sharing the store.
//
// Without any credential source (no Token, no Authenticators: dev mode's
// --no-auth, serve's no_auth) a request with no bearer token acts as
// AnonymousPrincipal, admin of every tenant: an API without
// authentication cannot tell teams apart, so it does not pretend to. A
// request that does carry an API token is still that token's principal,
// so roles can be tried out on such an API.

// TokenPrefix starts every API token, so that the token authenticator
// recognises its own and leaves other bearer tokens to the others.
const TokenPrefix = "aft_"

// BootstrapPrincipal is the principal of the configured bootstrap token.
func BootstrapPrincipal() identity.Principal {
	return identity.Principal{ID: "bootstrap", Name: "bootstrap", DefaultTenant: fleet.DefaultTenant,
		Grants: map[string]identity.Role{identity.AllTenants: identity.Admin}}
}

// AnonymousPrincipal is who acts on an API without authentication.
func AnonymousPrincipal() identity.Principal {
	return identity.Principal{ID: "anonymous", Name: "anonymous", DefaultTenant: fleet.DefaultTenant,
		Grants: map[string]identity.Role{identity.AllTenants: identity.Admin}}
}

// NewToken returns a new API token and the SHA-256 the store keeps.
func NewToken() (token string, hash []byte) {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand does not fail (Go 1.24+)
	token = TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token)
}

// HashToken is the SHA-256 of an API token, as stored.
func HashToken(token string) []byte {
	sum := sha256.Sum256([]byte(token))
	return sum[:]
}

// bootstrapAuth recognises the configured token.
type bootstrapAuth struct{ token []byte }

func (b bootstrapAuth) Authenticate(r *http.Request) (identity.Principal, bool, error) {
	got, ok := bearer(r)
	if !ok || subtle.ConstantTimeCompare([]byte(got), b.token) != 1 {
		return identity.Principal{}, false, nil
	}
	return BootstrapPrincipal(), true, nil
}

// tokenAuth recognises the API tokens of the store.
type tokenAuth struct {
	st  store.Principals
	now func() time.Time
}

// storeError marks an authenticator's error that is the store's, not the
// credential's (a 503, not a 401).
type storeError struct{ err error }

func (e storeError) Error() string { return "reading API tokens: " + e.err.Error() }
func (e storeError) Unwrap() error { return e.err }

func (t tokenAuth) Authenticate(r *http.Request) (identity.Principal, bool, error) {
	got, ok := bearer(r)
	if !ok || !strings.HasPrefix(got, TokenPrefix) {
		return identity.Principal{}, false, nil
	}
	tok, err := t.st.TokenByHash(r.Context(), HashToken(got))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return identity.Principal{}, true, errors.New("the API token is not known to this dispatcher")
	case err != nil:
		return identity.Principal{}, true, storeError{err}
	case !tok.RevokedAt.IsZero():
		return identity.Principal{}, true, fmt.Errorf("API token %s (%s) was revoked at %s", tok.ID, tok.Name, tok.RevokedAt.Format(time.RFC3339))
	case !tok.ExpiresAt.IsZero() && !t.now().Before(tok.ExpiresAt):
		return identity.Principal{}, true, fmt.Errorf("API token %s (%s) expired at %s: ask an admin for a new one", tok.ID, tok.Name, tok.ExpiresAt.Format(time.RFC3339))
	}
	return tokenPrincipal(tok), true, nil
}

// tokenPrincipal is the principal a stored token stands for.
func tokenPrincipal(tok store.Token) identity.Principal {
	p := identity.Principal{ID: "token:" + tok.ID.String(), Name: tok.Name, DefaultTenant: tok.DefaultTenant,
		Grants: make(map[string]identity.Role, len(tok.Grants))}
	for tenant, role := range tok.Grants {
		if r, err := identity.ParseRole(role); err == nil {
			p.Grants[tenant] = r
		}
	}
	return p
}

// authenticators lists the credential sources in the order they are asked.
func (a *handlers) authenticators() []identity.Authenticator {
	var out []identity.Authenticator
	if a.opts.Token != "" {
		out = append(out, bootstrapAuth{token: []byte(a.opts.Token)})
	}
	if a.principals != nil {
		out = append(out, tokenAuth{st: a.principals, now: time.Now})
	}
	return append(out, a.opts.Authenticators...)
}

// authOff reports whether the API runs without authentication.
func (a *handlers) authOff() bool { return a.opts.Token == "" && len(a.opts.Authenticators) == 0 }

// authenticate puts the request's principal in its context
// (identity.WithPrincipal): from its bearer token, or on an event stream
// from a stream ticket (403 when it is not valid, expired or used). A
// request without a credential is a 401, one whose credential no
// authenticator accepts a 401 naming why; without authentication (authOff)
// a request without a credential is AnonymousPrincipal's.
func (a *handlers) authenticate(next http.Handler, v1 *http.ServeMux) http.Handler {
	auths := a.authenticators()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, has := bearer(r)
		if !has && r.URL.Query().Has("ticket") {
			if _, route := v1.Handler(r); streamRoutes[route] {
				p, ok := a.tickets.redeem(r.URL.Query().Get("ticket"))
				if !ok {
					writeErr(w, http.StatusForbidden, api.ErrorDetail{Code: api.CodeForbidden, Field: "ticket",
						Message: "the stream ticket is not valid, has expired or was used: POST /v1/stream-tickets for a new one (each opens one stream within a minute)"})
					return
				}
				next.ServeHTTP(w, r.WithContext(identity.WithPrincipal(r.Context(), p)))
				return
			}
		}
		for _, au := range auths {
			p, ok, err := au.Authenticate(r)
			if err != nil {
				refuseCredential(w, err)
				return
			}
			if ok {
				next.ServeHTTP(w, r.WithContext(identity.WithPrincipal(r.Context(), p)))
				return
			}
		}
		switch {
		case !has && a.authOff():
			next.ServeHTTP(w, r.WithContext(identity.WithPrincipal(r.Context(), AnonymousPrincipal())))
		case !has:
			w.Header().Set("WWW-Authenticate", `Bearer realm="agentfleet"`)
			writeErr(w, http.StatusUnauthorized, api.ErrorDetail{Code: api.CodeUnauthorized,
				Message: "missing bearer token: send the header 'Authorization: Bearer <token>' (the client reads --token or AGENTFLEET_TOKEN; an event stream may pass ?ticket= from POST /v1/stream-tickets)"})
		default:
			refuseCredential(w, errors.New("the bearer token is not valid for this dispatcher"))
		}
	})
}

// refuseCredential answers a credential an authenticator refused: 401, or
// 503 when the store could not be read.
func refuseCredential(w http.ResponseWriter, err error) {
	if es, ok := errors.AsType[storeError](err); ok && store.IsRetryable(es.err) {
		w.Header().Set("Retry-After", fmt.Sprint(StoreRetryAfter))
		writeErr(w, http.StatusServiceUnavailable, api.ErrorDetail{Code: api.CodeUnavailable, Message: err.Error() + "; retry shortly"})
		return
	}
	if errors.As(err, new(storeError)) {
		writeErr(w, http.StatusInternalServerError, api.ErrorDetail{Code: api.CodeInternal, Message: err.Error()})
		return
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="agentfleet", error="invalid_token"`)
	writeErr(w, http.StatusUnauthorized, api.ErrorDetail{Code: api.CodeUnauthorized, Message: err.Error()})
}

// principal returns the request's principal (authenticate put it there).
func principal(r *http.Request) identity.Principal {
	p, _ := identity.FromContext(r.Context())
	return p
}

// whoami serves GET /v1/whoami.
func (a *handlers) whoami(w http.ResponseWriter, r *http.Request) {
	p := principal(r)
	writeJSON(w, http.StatusOK, api.Whoami{ID: p.ID, Name: p.Name, Grants: grantsView(p.Grants), DefaultTenant: p.DefaultTenant})
}

func grantsView(g map[string]identity.Role) map[string]string {
	out := make(map[string]string, len(g))
	for t, r := range g {
		out[t] = string(r)
	}
	return out
}
