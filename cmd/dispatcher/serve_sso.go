package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/agentfleet/agentfleet/internal/oidcauth"
)

// singleSignOn starts single sign-on when oidc.issuer is set (nil when
// not): the provider must answer its discovery at start.
func singleSignOn(ctx context.Context, cfg ServeConfig, log *slog.Logger) (*oidcauth.Auth, error) {
	if !cfg.OIDC.Enabled() {
		return nil, nil
	}
	c := cfg.OIDC
	c.AllowPrivate = cfg.allowPrivate() // a provider on the operator's network
	a, err := oidcauth.New(ctx, c)
	if err != nil {
		return nil, failf("%v", err)
	}
	if c.SessionKeyFile == "" {
		log.Warn("oidc.session_key_file is not set: dashboard sessions use a key generated now, and end when the dispatcher restarts")
	}
	log.Info("single sign-on", "issuer", c.Issuer, "client_id", c.ClientID, "redirect_url", c.RedirectURL, "mappings", len(c.Mappings))
	return a, nil
}

// withLogin serves the login flow at /auth/ and everything else with h.
func withLogin(h http.Handler, sso *oidcauth.Auth) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(oidcauth.StatusPath, sso.Handler())
	mux.Handle("/", h)
	return mux
}
