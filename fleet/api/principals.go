package api

import "time"

// Whoami is the answer to GET /v1/whoami: the authenticated principal.
type Whoami struct {
	ID            string            `json:"id"`
	Name          string            `json:"name"`
	Grants        map[string]string `json:"grants"` // tenant ("*": every tenant) to role
	DefaultTenant string            `json:"default_tenant"`
}

// TokenRequest is the body of POST /v1/tokens.
type TokenRequest struct {
	Name string `json:"name"`
	// Grants maps a tenant ("*" for every tenant) to a role: viewer,
	// submitter, approver or admin. The creator must be admin in each.
	Grants map[string]string `json:"grants"`
	// DefaultTenant is where a submission naming no tenant goes (default:
	// the only tenant of Grants, required with several).
	DefaultTenant string `json:"default_tenant,omitempty"`
	// ExpiresAt, or ExpiresIn (a Go duration such as "720h"); default
	// DefaultTokenLifetime from now.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	ExpiresIn string    `json:"expires_in,omitempty"`
}

// DefaultTokenLifetime is the expiry of a token created without one.
const DefaultTokenLifetime = 90 * 24 * time.Hour

// TokenView is a token as listed: never its secret.
type TokenView struct {
	ID            string            `json:"id"`
	Principal     string            `json:"principal"` // "token:<id>", the ID recorded for its actions
	Name          string            `json:"name"`
	Grants        map[string]string `json:"grants"`
	DefaultTenant string            `json:"default_tenant"`
	ExpiresAt     time.Time         `json:"expires_at,omitzero"`
	CreatedBy     string            `json:"created_by"`
	CreatedAt     time.Time         `json:"created_at"`
	RevokedAt     time.Time         `json:"revoked_at,omitzero"`
}

// CreatedToken is the answer to POST /v1/tokens: the only time the
// secret is shown.
type CreatedToken struct {
	TokenView
	Token string `json:"token"`
}

// TokenList is the answer to GET /v1/tokens.
type TokenList struct {
	Tokens []TokenView `json:"tokens"`
}

// AuditEntry is one recorded mutating call.
type AuditEntry struct {
	ID        int64     `json:"id"`
	At        time.Time `json:"at"`
	Principal string    `json:"principal"`
	Tenant    string    `json:"tenant"`
	Action    string    `json:"action"`
	Target    string    `json:"target"`
	Status    int       `json:"status"`
	Error     string    `json:"error,omitempty"`
}

// AuditList is one page of GET /v1/audit.
type AuditList struct {
	Entries    []AuditEntry `json:"entries"`
	NextCursor string       `json:"next_cursor,omitempty"`
}
