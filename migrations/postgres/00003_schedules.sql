-- +goose Up
-- Cron schedules (issue 34): a task spec a dispatcher submits on a
-- cadence, owned by a tenant and the principal that created it.
CREATE TABLE schedules (
    id           UUID PRIMARY KEY,
    name         TEXT NOT NULL,
    cron         TEXT NOT NULL,
    spec         JSONB NOT NULL,
    tenant       TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    paused       BOOLEAN NOT NULL DEFAULT FALSE,
    next_fire_at TIMESTAMPTZ NOT NULL,
    last_fire_at TIMESTAMPTZ,
    created_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX schedules_due_idx ON schedules (next_fire_at) WHERE NOT paused;

-- +goose Down
DROP TABLE schedules;
