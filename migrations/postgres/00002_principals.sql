-- +goose Up
-- Tenants and principals (issue 29): every task belongs to a tenant and
-- remembers the principal that submitted it (children inherit both);
-- API tokens are stored as SHA-256 hashes; the audit log records every
-- mutating API call. Existing tasks belong to the tenant "default".
ALTER TABLE tasks ADD COLUMN tenant text NOT NULL DEFAULT 'default';
ALTER TABLE tasks ADD COLUMN submitted_by text NOT NULL DEFAULT '';
CREATE INDEX tasks_tenant_created_idx ON tasks (tenant, created_at DESC, id DESC);

CREATE TABLE api_tokens (
    id             uuid PRIMARY KEY,
    name           text NOT NULL,
    hash           bytea NOT NULL UNIQUE,
    grants         jsonb NOT NULL,
    default_tenant text NOT NULL,
    expires_at     timestamptz,
    created_by     text NOT NULL,
    created_at     timestamptz NOT NULL,
    revoked_at     timestamptz
);

CREATE TABLE audit_log (
    id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at        timestamptz NOT NULL,
    principal text NOT NULL,
    tenant    text NOT NULL,
    action    text NOT NULL,
    target    text NOT NULL,
    status    integer NOT NULL,
    error     text NOT NULL DEFAULT ''
);
CREATE INDEX audit_log_at_idx ON audit_log (at);
CREATE INDEX audit_log_tenant_idx ON audit_log (tenant, id DESC);

-- +goose Down
DROP TABLE audit_log;
DROP TABLE api_tokens;
DROP INDEX tasks_tenant_created_idx;
ALTER TABLE tasks DROP COLUMN submitted_by;
ALTER TABLE tasks DROP COLUMN tenant;
