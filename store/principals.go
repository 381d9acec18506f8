package store

import (
	"context"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// Principals is the part of the store that holds who may use the API:
// API tokens (stored as hashes, never in clear) and the audit log of
// mutating calls. Both drivers implement it with Store.
type Principals interface {
	// CreateToken stores a token's hash and grants. A hash that exists is
	// ErrConflict.
	CreateToken(ctx context.Context, p CreateTokenParams) (Token, error)
	// TokenByHash returns the token with that hash, revoked or expired
	// ones included (the caller refuses them), or ErrNotFound.
	TokenByHash(ctx context.Context, hash []byte) (Token, error)
	// ListTokens returns the tokens, newest first.
	ListTokens(ctx context.Context, p ListTokensParams) ([]Token, error)
	// RevokeToken stamps RevokedAt (once: a second revoke keeps the first
	// time) and returns the token; ErrNotFound when there is none.
	RevokeToken(ctx context.Context, id uuid.UUID) (Token, error)

	// AppendAudit records one entry; At defaults to now.
	AppendAudit(ctx context.Context, e AuditEntry) (AuditEntry, error)
	// ListAudit returns one page of entries, newest first.
	ListAudit(ctx context.Context, p ListAuditParams) (AuditPage, error)
	// DeleteAudit deletes the entries older than p.Before in the tenants p
	// selects and says how many.
	DeleteAudit(ctx context.Context, p DeleteAuditParams) (int64, error)
}

// Token is an API token: who it is (ID, Name), what it may do (Grants,
// tenant to role name) and until when. Hash is SHA-256 of the secret.
type Token struct {
	ID            uuid.UUID
	Name          string
	Hash          []byte
	Grants        map[string]string
	DefaultTenant string
	ExpiresAt     time.Time // zero: never
	CreatedBy     string
	CreatedAt     time.Time
	RevokedAt     time.Time // zero unless revoked
}

// CreateTokenParams describes a new token.
type CreateTokenParams struct {
	ID            uuid.UUID // optional; generated when Nil
	Name          string    // required
	Hash          []byte    // required, 32 bytes
	Grants        map[string]string
	DefaultTenant string // required
	ExpiresAt     time.Time
	CreatedBy     string // required
}

// ListTokensParams filters the token list.
type ListTokensParams struct {
	IncludeRevoked bool
}

// PrepareCreateToken checks p; drivers call it first.
func PrepareCreateToken(p CreateTokenParams) (CreateTokenParams, error) {
	if p.ID == uuid.Nil {
		p.ID = NewID()
	}
	switch {
	case len(p.Hash) != 32:
		return p, invalidf("Hash", "must be a SHA-256 hash (32 bytes), got %d bytes", len(p.Hash))
	case len(p.Grants) == 0:
		return p, invalidf("Grants", "is empty: a token needs a role in at least one tenant")
	}
	for _, f := range []struct{ name, v string }{{"Name", p.Name}, {"DefaultTenant", p.DefaultTenant}, {"CreatedBy", p.CreatedBy}} {
		if err := checkRequired(f.name, f.v); err != nil {
			return p, err
		}
		if err := checkText(f.name, f.v, 512); err != nil {
			return p, err
		}
	}
	return p, nil
}

// AuditEntry is one mutating API call: who (Principal), in which tenant,
// what (Action, e.g. "task.cancel"), on what (Target, e.g. a task id) and
// how it ended (Status, the HTTP status code; Error, the message of a
// failure).
type AuditEntry struct {
	ID        int64
	At        time.Time
	Principal string
	Tenant    string
	Action    string
	Target    string
	Status    int
	Error     string
}

// ListAuditParams filters and pages the audit log. Zero fields do not
// filter; Tenants nil does not filter, an empty non-nil slice matches
// nothing.
type ListAuditParams struct {
	Tenants   []string
	Principal string
	Action    string
	Since     time.Time // inclusive
	Until     time.Time // exclusive
	Limit     int       // default 100, at most 1000
	Cursor    string    // from AuditPage.NextCursor
}

// DeleteAuditParams selects the audit entries DeleteAudit deletes: those
// older than Before (required) whose tenant is in Tenants (nil: any; an
// empty non-nil slice: none) and not in ExceptTenants. Entries without a
// tenant ("") are selected by a nil Tenants unless ExceptTenants names
// "": a retention default sweeps them with everything but the tenants
// that have windows of their own.
type DeleteAuditParams struct {
	Before        time.Time
	Tenants       []string
	ExceptTenants []string
}

// Validate names the first wrong field.
func (p DeleteAuditParams) Validate() error {
	if p.Before.IsZero() {
		return invalidf("Before", "is required: the entries older than it are deleted")
	}
	return nil
}

// AuditPage is one page of ListAudit.
type AuditPage struct {
	Entries    []AuditEntry
	NextCursor string
}

// AuditFilter is ListAuditParams checked, with the cursor decoded.
type AuditFilter struct {
	ListAuditParams
	BeforeID int64 // entries with a smaller id; 0 on the first page
}

// PrepareListAudit checks p and decodes its cursor.
func PrepareListAudit(p ListAuditParams) (AuditFilter, error) {
	f := AuditFilter{ListAuditParams: p}
	switch {
	case f.Limit == 0:
		f.Limit = DefaultListLimit
	case f.Limit < 0 || f.Limit > MaxListLimit:
		return f, invalidf("Limit", "must be between 1 and %d, got %d", MaxListLimit, f.Limit)
	}
	if p.Cursor != "" {
		n, err := strconv.ParseInt(p.Cursor, 36, 64)
		if err != nil || n <= 0 {
			return f, invalidf("Cursor", "%q is not a cursor of the audit log; pass next_cursor as it was given", p.Cursor)
		}
		f.BeforeID = n
	}
	return f, nil
}

// PrepareAudit checks an entry to append and stamps its time.
func PrepareAudit(e AuditEntry, now time.Time) (AuditEntry, error) {
	if e.At.IsZero() {
		e.At = now
	}
	e.At = Timestamp(e.At)
	for _, f := range []struct{ name, v string }{{"Principal", e.Principal}, {"Action", e.Action}} {
		if err := checkRequired(f.name, f.v); err != nil {
			return e, err
		}
	}
	if len(e.Error) > 4096 {
		e.Error = e.Error[:4096]
	}
	return e, nil
}

// AuditPageOf cuts entries (fetched with limit+1) to a page.
func AuditPageOf(entries []AuditEntry, limit int) AuditPage {
	if len(entries) <= limit {
		return AuditPage{Entries: entries}
	}
	entries = entries[:limit]
	return AuditPage{Entries: entries, NextCursor: strconv.FormatInt(entries[limit-1].ID, 36)}
}
