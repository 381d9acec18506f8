package oidcauth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/agentfleet/agentfleet/internal/identity"
)

// The paths Handler serves, and the cookies it sets.
const (
	StatusPath   = "/auth/"
	LoginPath    = "/auth/login"
	CallbackPath = "/auth/callback"
	LogoutPath   = "/auth/logout"
	// SessionCookie holds the sealed principal of a dashboard login.
	SessionCookie = "agentfleet_session"
	// loginCookie holds the sealed state, nonce and PKCE verifier of a
	// login under way, for loginTTL.
	loginCookie = "agentfleet_login"
	loginTTL    = 10 * time.Minute
)

// pending is a login under way, sealed in the login cookie.
type pending struct {
	State    string `json:"state"`
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	Return   string `json:"return"`
}

// Handler serves the login flow:
//
//	GET  /auth/          {"sso": true, "login": "/auth/login"}: the dashboard asks whether to offer it
//	GET  /auth/login     ?return=<local path>: off to the provider (code flow, PKCE S256, state, nonce)
//	GET  /auth/callback  the provider's return: sets the session cookie, back to the return path
//	POST /auth/logout    clears the session cookie (204)
//
// Mount it at /auth/ in front of the dashboard.
func (a *Auth) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+StatusPath+"{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(map[string]any{"sso": true, "login": LoginPath, "logout": LogoutPath})
	})
	mux.HandleFunc("GET "+LoginPath, a.login)
	mux.HandleFunc("GET "+CallbackPath, a.callback)
	mux.HandleFunc("POST "+LogoutPath, a.logout)
	return mux
}

func (a *Auth) login(w http.ResponseWriter, r *http.Request) {
	p := pending{State: random(), Nonce: random(), Verifier: oauth2.GenerateVerifier(), Return: localPath(r.URL.Query().Get("return"))}
	sealed, err := a.seal.seal(loginCookie, p, a.cfg.Now().Add(loginTTL))
	if err != nil {
		http.Error(w, "sealing the login state: "+err.Error(), http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, a.cookie(r, loginCookie, sealed, "/auth/", loginTTL))
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, a.oauth.AuthCodeURL(p.State, oauth2.S256ChallengeOption(p.Verifier), oidc.Nonce(p.Nonce)), http.StatusFound)
}

func (a *Auth) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if e := q.Get("error"); e != "" {
		http.Error(w, fmt.Sprintf("the provider refused the login: %s %s", e, q.Get("error_description")), http.StatusForbidden)
		return
	}
	var p pending
	c, err := r.Cookie(loginCookie)
	if err == nil {
		err = a.seal.open(loginCookie, c.Value, a.cfg.Now(), &p)
	}
	http.SetCookie(w, a.cookie(r, loginCookie, "", "/auth/", -1)) // one use
	if err != nil || subtle.ConstantTimeCompare([]byte(p.State), []byte(q.Get("state"))) != 1 {
		http.Error(w, "this login was not started here or took longer than 10 minutes: start again at "+LoginPath, http.StatusBadRequest)
		return
	}
	principal, err := a.exchange(r.Context(), q.Get("code"), p)
	if err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	sealed, err := a.seal.seal(SessionCookie, principal, a.cfg.Now().Add(a.cfg.SessionTTL))
	if err != nil {
		http.Error(w, "sealing the session: "+err.Error(), http.StatusInternalServerError)
		return
	}
	http.SetCookie(w, a.cookie(r, SessionCookie, sealed, "/", a.cfg.SessionTTL))
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, p.Return, http.StatusSeeOther)
}

// exchange redeems the code with the PKCE verifier, verifies the ID
// token and its nonce, and maps its claims to a principal.
func (a *Auth) exchange(ctx context.Context, code string, p pending) (identity.Principal, error) {
	tok, err := a.oauth.Exchange(context.WithValue(ctx, oauth2.HTTPClient, a.client), code, oauth2.VerifierOption(p.Verifier))
	if err != nil {
		return identity.Principal{}, fmt.Errorf("redeeming the login code at the provider: %v", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return identity.Principal{}, fmt.Errorf("the provider returned no ID token: is openid among oidc.scopes?")
	}
	id, err := a.verifier.Verify(ctx, raw)
	if err != nil {
		return identity.Principal{}, fmt.Errorf("the provider's ID token is not valid: %v", err)
	}
	if subtle.ConstantTimeCompare([]byte(id.Nonce), []byte(p.Nonce)) != 1 {
		return identity.Principal{}, fmt.Errorf("the ID token's nonce is not this login's: start again at %s", LoginPath)
	}
	var cl claims
	if err := id.Claims(&cl); err != nil {
		return identity.Principal{}, err
	}
	return a.cfg.principal(cl)
}

func (a *Auth) logout(w http.ResponseWriter, r *http.Request) {
	if err := sameOrigin(r); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	http.SetCookie(w, a.cookie(r, SessionCookie, "", "/", -1))
	w.WriteHeader(http.StatusNoContent)
}

// cookie is an HttpOnly, SameSite=Lax cookie, Secure when the dispatcher
// is reached over https (redirect_url is https, or r came over TLS); a
// negative ttl deletes it.
func (a *Auth) cookie(r *http.Request, name, value, path string, ttl time.Duration) *http.Cookie {
	//nolint:gosec // Secure whenever the dashboard is reached over https; a loopback http one needs the cookie too
	c := &http.Cookie{Name: name, Value: value, Path: path, HttpOnly: true, Secure: a.secure || r.TLS != nil, SameSite: http.SameSiteLaxMode}
	if ttl < 0 {
		c.MaxAge = -1
	} else {
		c.MaxAge = int(ttl / time.Second)
	}
	return c
}

// localPath is ret when it is a path on this origin ("/", "/#task=..."),
// else "/": the login never redirects off the dispatcher.
func localPath(ret string) string {
	if !strings.HasPrefix(ret, "/") || strings.HasPrefix(ret, "//") || strings.HasPrefix(ret, "/\\") || strings.ContainsAny(ret, "\r\n") {
		return "/"
	}
	return ret
}

func random() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
