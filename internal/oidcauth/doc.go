// Package oidcauth is single sign-on for the dispatcher with one OpenID
// Connect provider (Gitea, Keycloak, Dex, Okta, Entra ID...): people log
// in to the dashboard through the provider, and API clients may send the
// provider's tokens as bearer tokens. Either way the request acts as an
// identity.Principal whose tenants and roles come from the provider's
// claims through the operator's mappings (Config.Mappings).
//
// # Login (the dashboard)
//
// Auth.Handler serves /auth/login, /auth/callback and /auth/logout: the
// authorization code flow with PKCE (S256), a random state and nonce
// kept in a short-lived sealed cookie (10 minutes, Path=/auth/), the code
// redeemed with the client secret, the ID token verified (issuer,
// audience = the client id, expiry, signature by the provider's published
// keys) and its nonce compared. The principal is then sealed into the
// session cookie (agentfleet_session): AES-256-GCM, so it can be neither
// read nor changed without the key; HttpOnly, SameSite=Lax, Secure when
// redirect_url is https or the request came over TLS, valid for session_ttl (8 h by default). The key
// is session_key_file's, or generated at start: then a restart logs
// every user out. A session is not refreshed or re-checked at the
// provider: a user removed from a group keeps the role until the session
// ends (keep session_ttl short where that matters).
//
// # Bearer tokens (the API)
//
// Bearer accepts a JWT in "Authorization: Bearer": an ID token of the
// provider for this client (the same checks as at login; its groups are
// those asked for when it was issued), or, with accept_access_tokens, an
// access token the provider's userinfo endpoint accepts (answers reused
// for a minute). A bearer that is not a JWT is left to the next
// authenticator (API tokens). Access tokens are off by default: they do
// not name the client they were issued to, so any application of the
// provider could present one.
//
// # Mapping claims to roles
//
// Each mapping grants a role in a tenant (or "*", every tenant) to users
// whose claim (groups_claim, "groups", unless the mapping names another,
// such as email) holds its value; a user holds the highest role any
// mapping gives per tenant, and a user no mapping matches cannot log in.
// Gitea's groups claim lists "org" and "org:team" (team names in lower
// case) for the orgs and teams the user belongs to, when the groups scope
// is asked for. The principal's id is "oidc:<sub>@<issuer host/path>";
// its name the name claim, else preferred_username, email or sub.
//
// # Requests
//
// Every request to the provider (discovery, keys, token, userinfo) goes
// through internal/outbound; a provider on a private address needs the
// dispatcher's outbound_allow_private. A cookie-authenticated request
// that changes something must come from the dispatcher's own origin
// (Origin, Sec-Fetch-Site), since SameSite does not separate ports.
package oidcauth
