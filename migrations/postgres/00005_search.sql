-- +goose Up
-- Text search over tasks (issue 35): a tsvector of the prompt (weight
-- A), the final answer (B) and the failure reason (C), with a GIN index;
-- queries use websearch_to_tsquery. A trigger on the columns it reads
-- keeps it, rather than a generated column, so the frequent updates that
-- touch neither (heartbeats, claims) never recompute it. Each part is cut
-- to 100,000 characters so no task can exceed the tsvector size limit.
ALTER TABLE tasks ADD COLUMN search tsvector;

-- +goose StatementBegin
CREATE FUNCTION tasks_search_vector(spec jsonb, result jsonb, error text) RETURNS tsvector
LANGUAGE sql IMMUTABLE AS $$
    SELECT setweight(to_tsvector('english'::regconfig, left(coalesce(spec ->> 'prompt', ''), 100000)), 'A') ||
           setweight(to_tsvector('english'::regconfig, left(coalesce(result ->> 'final_text', ''), 100000)), 'B') ||
           setweight(to_tsvector('english'::regconfig, left(coalesce(error, ''), 100000)), 'C')
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION tasks_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search := tasks_search_vector(NEW.spec, NEW.result, NEW.error);
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER tasks_search_insert BEFORE INSERT ON tasks
    FOR EACH ROW EXECUTE FUNCTION tasks_search_update();
CREATE TRIGGER tasks_search_update BEFORE UPDATE OF spec, result, error ON tasks
    FOR EACH ROW EXECUTE FUNCTION tasks_search_update();
UPDATE tasks SET search = tasks_search_vector(spec, result, error);
CREATE INDEX tasks_search_idx ON tasks USING gin (search);

-- +goose Down
DROP INDEX tasks_search_idx;
DROP TRIGGER tasks_search_update ON tasks;
DROP TRIGGER tasks_search_insert ON tasks;
DROP FUNCTION tasks_search_update();
DROP FUNCTION tasks_search_vector(jsonb, jsonb, text);
ALTER TABLE tasks DROP COLUMN search;
