-- +goose Up
-- Delayed starts (issue 34): a task submitted with run_at is stored
-- queued at once, and its start message is published by a dispatcher
-- once run_at has come (fleet/dispatcher run_at.go).
CREATE TABLE delayed_starts (
    task_id UUID PRIMARY KEY,
    run_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX delayed_starts_due_idx ON delayed_starts (run_at);

-- +goose Down
DROP TABLE delayed_starts;
