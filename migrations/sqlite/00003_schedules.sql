-- +goose Up
-- Cron schedules (issue 34): a task spec a dispatcher submits on a
-- cadence, owned by a tenant and the principal that created it. Times are
-- Unix microseconds, as in the other tables.
CREATE TABLE schedules (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    cron         TEXT NOT NULL,
    spec         TEXT NOT NULL,
    tenant       TEXT NOT NULL,
    created_by   TEXT NOT NULL,
    paused       INTEGER NOT NULL DEFAULT 0,
    next_fire_at INTEGER NOT NULL,
    last_fire_at INTEGER,
    created_at   INTEGER NOT NULL
) STRICT;
CREATE INDEX schedules_due_idx ON schedules (next_fire_at) WHERE paused = 0;

-- +goose Down
DROP TABLE schedules;
