-- +goose Up
-- Tenants and principals (issue 29): every task belongs to a tenant and
-- remembers the principal that submitted it (children inherit both);
-- API tokens are stored as SHA-256 hashes; the audit log records every
-- mutating API call. Existing tasks belong to the tenant "default".
ALTER TABLE tasks ADD COLUMN tenant TEXT NOT NULL DEFAULT 'default';
ALTER TABLE tasks ADD COLUMN submitted_by TEXT NOT NULL DEFAULT '';
CREATE INDEX tasks_tenant_created_idx ON tasks (tenant, created_at DESC, id DESC);

CREATE TABLE api_tokens (
    id             TEXT PRIMARY KEY,
    name           TEXT NOT NULL,
    hash           BLOB NOT NULL UNIQUE,
    grants         TEXT NOT NULL,
    default_tenant TEXT NOT NULL,
    expires_at     INTEGER,
    created_by     TEXT NOT NULL,
    created_at     INTEGER NOT NULL,
    revoked_at     INTEGER
) STRICT;

CREATE TABLE audit_log (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    at        INTEGER NOT NULL,
    principal TEXT NOT NULL,
    tenant    TEXT NOT NULL,
    action    TEXT NOT NULL,
    target    TEXT NOT NULL,
    status    INTEGER NOT NULL,
    error     TEXT NOT NULL DEFAULT ''
) STRICT;
CREATE INDEX audit_log_at_idx ON audit_log (at);
CREATE INDEX audit_log_tenant_idx ON audit_log (tenant, id DESC);

-- +goose Down
DROP TABLE audit_log;
DROP TABLE api_tokens;
DROP INDEX tasks_tenant_created_idx;
ALTER TABLE tasks DROP COLUMN submitted_by;
ALTER TABLE tasks DROP COLUMN tenant;
