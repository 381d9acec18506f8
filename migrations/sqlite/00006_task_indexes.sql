-- +goose Up
-- Postgres's 00006 makes three tasks indexes partial to cut the write
-- amplification of claims and ends on the fleet's shared store. The SQLite
-- store (dev mode, one process) keeps its indexes; this migration only
-- keeps the two dialects' versions in step.
SELECT 1;

-- +goose Down
SELECT 1;
