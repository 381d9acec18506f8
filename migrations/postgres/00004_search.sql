-- +goose Up
-- Text search over tasks (issue 35): a stored tsvector of the prompt
-- (weight A), the final answer (B) and the failure reason (C), kept by
-- Postgres itself, with a GIN index; queries use websearch_to_tsquery.
-- Each part is cut to 100,000 characters so no task can exceed the
-- tsvector size limit. Adding the column rewrites the tasks table once.
ALTER TABLE tasks ADD COLUMN search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english'::regconfig, left(coalesce(spec ->> 'prompt', ''), 100000)), 'A') ||
    setweight(to_tsvector('english'::regconfig, left(coalesce(result ->> 'final_text', ''), 100000)), 'B') ||
    setweight(to_tsvector('english'::regconfig, left(error, 100000)), 'C')
) STORED;
CREATE INDEX tasks_search_idx ON tasks USING gin (search);

-- +goose Down
DROP INDEX tasks_search_idx;
ALTER TABLE tasks DROP COLUMN search;
