-- +goose Up
-- Cheaper task writes (issue 28): every claim and end rewrites a tasks row
-- in a new place (both change state, so no HOT update), and each
-- non-partial index of the table gets a new entry each time. Three indexes
-- held an entry for every task although almost no task has a value for
-- them: the idempotency key (NULL unless the submitter gave one) and the
-- labels (mostly '{}'); and the tree index held every root task, which
-- its id already finds. All three become partial; the queries that use
-- them state the predicate (ON CONFLICT ... WHERE idempotency_key IS NOT
-- NULL; labels <> '{}' next to a containment filter, which only a task
-- with labels can match; a tree is its root by id or its children by
-- root_id).
ALTER TABLE tasks DROP CONSTRAINT tasks_idempotency_key_key;
CREATE UNIQUE INDEX tasks_idempotency_key_idx ON tasks (idempotency_key)
    WHERE idempotency_key IS NOT NULL;
DROP INDEX tasks_labels_idx;
CREATE INDEX tasks_labels_idx ON tasks USING gin (labels jsonb_path_ops)
    WHERE labels <> '{}'::jsonb;
-- A tree's tasks by root: the root itself is found by its id (a root's
-- root_id is its own id), so only children need an entry.
DROP INDEX tasks_root_idx;
CREATE INDEX tasks_root_idx ON tasks (root_id, depth, created_at)
    WHERE parent_id IS NOT NULL;

-- +goose Down
DROP INDEX tasks_root_idx;
CREATE INDEX tasks_root_idx ON tasks (root_id, depth, created_at);
DROP INDEX tasks_labels_idx;
CREATE INDEX tasks_labels_idx ON tasks USING gin (labels jsonb_path_ops);
DROP INDEX tasks_idempotency_key_idx;
ALTER TABLE tasks ADD CONSTRAINT tasks_idempotency_key_key UNIQUE (idempotency_key);
