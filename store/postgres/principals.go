package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/agentfleet/agentfleet/store"
)

//nolint:gosec // column names, not a credential
const tokenCols = `id, name, hash, grants, default_tenant, expires_at, created_by, created_at, revoked_at`

func scanToken(row pgx.Row) (store.Token, error) {
	var (
		t                store.Token
		grants           []byte
		expires, revoked pgtype.Timestamptz
	)
	if err := row.Scan(&t.ID, &t.Name, &t.Hash, &grants, &t.DefaultTenant, &expires, &t.CreatedBy, &t.CreatedAt, &revoked); err != nil {
		return t, err
	}
	if err := json.Unmarshal(grants, &t.Grants); err != nil {
		return t, fmt.Errorf("token %s: grants: %w", t.ID, err)
	}
	t.CreatedAt, t.ExpiresAt, t.RevokedAt = t.CreatedAt.UTC(), ts(expires), ts(revoked)
	return t, nil
}

// CreateToken implements store.Store.
func (s *Store) CreateToken(ctx context.Context, p store.CreateTokenParams) (store.Token, error) {
	p, err := store.PrepareCreateToken(p)
	if err != nil {
		return store.Token{}, err
	}
	grants, _ := json.Marshal(p.Grants) // a map of strings always marshals
	t, err := scanToken(s.pool.QueryRow(ctx, `INSERT INTO api_tokens (id, name, hash, grants, default_tenant, expires_at, created_by, created_at)
VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8) RETURNING `+tokenCols, p.ID, p.Name, p.Hash, string(grants), p.DefaultTenant,
		nullTime(p.ExpiresAt), p.CreatedBy, s.stamp()))
	return t, translate("CreateToken", err)
}

// TokenByHash implements store.Store.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (store.Token, error) {
	t, err := scanToken(s.pool.QueryRow(ctx, `SELECT `+tokenCols+` FROM api_tokens WHERE hash = $1`, hash))
	if errors.Is(err, pgx.ErrNoRows) {
		return t, store.NotFoundf("TokenByHash", "no such token")
	}
	return t, translate("TokenByHash", err)
}

// ListTokens implements store.Store.
func (s *Store) ListTokens(ctx context.Context, p store.ListTokensParams) ([]store.Token, error) {
	q := `SELECT ` + tokenCols + ` FROM api_tokens`
	if !p.IncludeRevoked {
		q += ` WHERE revoked_at IS NULL`
	}
	rows, err := s.pool.Query(ctx, q+` ORDER BY created_at DESC, id DESC`)
	if err != nil {
		return nil, translate("ListTokens", err)
	}
	defer rows.Close()
	var out []store.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, translate("ListTokens", err)
		}
		out = append(out, t)
	}
	return out, translate("ListTokens", rows.Err())
}

// RevokeToken implements store.Store.
func (s *Store) RevokeToken(ctx context.Context, id uuid.UUID) (store.Token, error) {
	t, err := scanToken(s.pool.QueryRow(ctx, `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, $1)
WHERE id = $2 RETURNING `+tokenCols, s.stamp(), id))
	if errors.Is(err, pgx.ErrNoRows) {
		return t, store.NotFoundf("RevokeToken", "no token %s", id)
	}
	return t, translate("RevokeToken", err)
}

const auditCols = `id, at, principal, tenant, action, target, status, error`

func scanAudit(row pgx.Row) (store.AuditEntry, error) {
	var e store.AuditEntry
	err := row.Scan(&e.ID, &e.At, &e.Principal, &e.Tenant, &e.Action, &e.Target, &e.Status, &e.Error)
	e.At = e.At.UTC()
	return e, err
}

// AppendAudit implements store.Store.
func (s *Store) AppendAudit(ctx context.Context, e store.AuditEntry) (store.AuditEntry, error) {
	e, err := store.PrepareAudit(e, s.now())
	if err != nil {
		return e, err
	}
	e, err = scanAudit(s.pool.QueryRow(ctx, `INSERT INTO audit_log (at, principal, tenant, action, target, status, error)
VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING `+auditCols, e.At, e.Principal, e.Tenant, e.Action, e.Target, e.Status, e.Error))
	return e, translate("AppendAudit", err)
}

// ListAudit implements store.Store.
func (s *Store) ListAudit(ctx context.Context, p store.ListAuditParams) (store.AuditPage, error) {
	f, err := store.PrepareListAudit(p)
	if err != nil {
		return store.AuditPage{}, err
	}
	var w where
	w.tenants("tenant", f.Tenants)
	if f.Principal != "" {
		w.add("principal = ?", f.Principal)
	}
	if f.Action != "" {
		w.add("action = ?", f.Action)
	}
	if !f.Since.IsZero() {
		w.add("at >= ?", f.Since)
	}
	if !f.Until.IsZero() {
		w.add("at < ?", f.Until)
	}
	if f.BeforeID > 0 {
		w.add("id < ?", f.BeforeID)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+auditCols+` FROM audit_log`+w.sql()+
		fmt.Sprintf(" ORDER BY id DESC LIMIT %d", f.Limit+1), w.args...)
	if err != nil {
		return store.AuditPage{}, translate("ListAudit", err)
	}
	defer rows.Close()
	var out []store.AuditEntry
	for rows.Next() {
		e, err := scanAudit(rows)
		if err != nil {
			return store.AuditPage{}, translate("ListAudit", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return store.AuditPage{}, translate("ListAudit", err)
	}
	return store.AuditPageOf(out, f.Limit), nil
}

// DeleteAudit implements store.Store.
func (s *Store) DeleteAudit(ctx context.Context, p store.DeleteAuditParams) (int64, error) {
	if err := p.Validate(); err != nil {
		return 0, err
	}
	var w where
	w.add("at < ?", p.Before)
	w.tenants("tenant", p.Tenants)
	w.except("tenant", p.ExceptTenants)
	tag, err := s.pool.Exec(ctx, `DELETE FROM audit_log`+w.sql(), w.args...)
	if err != nil {
		return 0, translate("DeleteAudit", err)
	}
	return tag.RowsAffected(), nil
}
