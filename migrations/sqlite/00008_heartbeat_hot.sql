-- +goose Up
-- Postgres's 00008 drops the index on heartbeat_at so that heartbeats can
-- be HOT updates. SQLite (dev mode, one process) keeps its indexes; this
-- migration only keeps the two dialects' versions in step.
SELECT 1;

-- +goose Down
SELECT 1;
