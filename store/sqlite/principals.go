package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/agentfleet/agentfleet/store"
)

//nolint:gosec // column names, not a credential
const tokenCols = `id, name, hash, grants, default_tenant, expires_at, created_by, created_at, revoked_at`

func scanToken(row scanner) (store.Token, error) {
	var (
		t                store.Token
		grants           string
		created          int64
		expires, revoked sql.NullInt64
	)
	if err := row.Scan(&t.ID, &t.Name, &t.Hash, &grants, &t.DefaultTenant, &expires, &t.CreatedBy, &created, &revoked); err != nil {
		return t, err
	}
	if err := json.Unmarshal([]byte(grants), &t.Grants); err != nil {
		return t, fmt.Errorf("token %s: grants: %w", t.ID, err)
	}
	t.CreatedAt, t.ExpiresAt, t.RevokedAt = micros(created), nullMicros(expires), nullMicros(revoked)
	return t, nil
}

// CreateToken implements store.Store.
func (s *Store) CreateToken(ctx context.Context, p store.CreateTokenParams) (store.Token, error) {
	p, err := store.PrepareCreateToken(p)
	if err != nil {
		return store.Token{}, err
	}
	grants, _ := json.Marshal(p.Grants) // a map of strings always marshals
	var t store.Token
	err = s.tx(ctx, "CreateToken", func(tx *sql.Tx) error {
		var err error
		t, err = scanToken(tx.QueryRowContext(ctx, `INSERT INTO api_tokens (id, name, hash, grants, default_tenant, expires_at, created_by, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING `+tokenCols, p.ID.String(), p.Name, p.Hash, string(grants), p.DefaultTenant,
			timeArg(p.ExpiresAt), p.CreatedBy, s.stamp()))
		return err
	})
	return t, err
}

// TokenByHash implements store.Store.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (store.Token, error) {
	t, err := scanToken(s.r.QueryRowContext(ctx, `SELECT `+tokenCols+` FROM api_tokens WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
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
	rows, err := s.r.QueryContext(ctx, q+` ORDER BY created_at DESC, id DESC`)
	if err != nil {
		return nil, translate("ListTokens", err)
	}
	defer func() { _ = rows.Close() }()
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
	var t store.Token
	err := s.tx(ctx, "RevokeToken", func(tx *sql.Tx) error {
		var err error
		t, err = scanToken(tx.QueryRowContext(ctx, `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, ?)
WHERE id = ? RETURNING `+tokenCols, s.stamp(), id.String()))
		if errors.Is(err, sql.ErrNoRows) {
			return store.NotFoundf("RevokeToken", "no token %s", id)
		}
		return err
	})
	return t, err
}

const auditCols = `id, at, principal, tenant, action, target, status, error`

func scanAudit(row scanner) (store.AuditEntry, error) {
	var e store.AuditEntry
	var at int64
	err := row.Scan(&e.ID, &at, &e.Principal, &e.Tenant, &e.Action, &e.Target, &e.Status, &e.Error)
	e.At = micros(at)
	return e, err
}

// AppendAudit implements store.Store.
func (s *Store) AppendAudit(ctx context.Context, e store.AuditEntry) (store.AuditEntry, error) {
	e, err := store.PrepareAudit(e, s.now())
	if err != nil {
		return e, err
	}
	err = s.tx(ctx, "AppendAudit", func(tx *sql.Tx) error {
		var err error
		e, err = scanAudit(tx.QueryRowContext(ctx, `INSERT INTO audit_log (at, principal, tenant, action, target, status, error)
VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING `+auditCols, e.At.UnixMicro(), e.Principal, e.Tenant, e.Action, e.Target, e.Status, e.Error))
		return err
	})
	return e, err
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
		w.add("at >= ?", f.Since.UnixMicro())
	}
	if !f.Until.IsZero() {
		w.add("at < ?", f.Until.UnixMicro())
	}
	if f.BeforeID > 0 {
		w.add("id < ?", f.BeforeID)
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+auditCols+` FROM audit_log`+w.sql()+ //nolint:gosec // G202: placeholders only
		fmt.Sprintf(" ORDER BY id DESC LIMIT %d", f.Limit+1), w.args...)
	if err != nil {
		return store.AuditPage{}, translate("ListAudit", err)
	}
	defer func() { _ = rows.Close() }()
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
	w.add("at < ?", p.Before.UnixMicro())
	w.tenants("tenant", p.Tenants)
	w.except("tenant", p.ExceptTenants)
	var n int64
	err := s.tx(ctx, "DeleteAudit", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM audit_log`+w.sql(), w.args...) //nolint:gosec // G202: w.sql() holds placeholders only; values go in w.args
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
