-- +goose Up
-- The search vector moves out of tasks into task_search, one row per task
-- with the GIN index, and a task's end no longer parses its prompt again.
--
-- Why a table of its own: every update of a tasks row that is not HOT
-- (claims, heartbeats and ends change indexed columns) inserted the whole
-- vector into the GIN index again, about 300 lexemes for a 4 KB prompt,
-- and carried the vector (kilobytes) in every new row version. Now only
-- the updates that change the vector write it: a task's insert, its end
-- (the answer, the failure reason) and a change of its spec.
--
-- Why the end is cheaper: an update that leaves the spec as it was keeps
-- the prompt's lexemes of the old vector (ts_filter on weight A keeps them
-- with their positions, so the concatenation that follows shifts the
-- answer's and the reason's positions as before) and parses only the
-- answer and the reason; an empty part is not parsed at all. The vector is
-- the same as one computed from scratch (store/postgres/search_test.go).
CREATE TABLE task_search (
    task_id uuid PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    search  tsvector NOT NULL
);
INSERT INTO task_search (task_id, search)
    SELECT id, coalesce(search, tasks_search_vector(spec, result, error)) FROM tasks;
CREATE INDEX task_search_idx ON task_search USING gin (search);
DROP TRIGGER tasks_search_update ON tasks;
DROP TRIGGER tasks_search_insert ON tasks;
DROP FUNCTION tasks_search_update();
DROP INDEX tasks_search_idx;
ALTER TABLE tasks DROP COLUMN search;

-- The answer's and the reason's part of a vector, the one rule for it:
-- tasks_search_vector is the prompt's part followed by this.
-- +goose StatementBegin
CREATE FUNCTION tasks_search_outcome(result jsonb, error text) RETURNS tsvector
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN coalesce(result ->> 'final_text', '') = '' THEN ''::tsvector
                ELSE setweight(to_tsvector('english'::regconfig, left(result ->> 'final_text', 100000)), 'B') END ||
           CASE WHEN coalesce(error, '') = '' THEN ''::tsvector
                ELSE setweight(to_tsvector('english'::regconfig, left(error, 100000)), 'C') END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tasks_search_vector(spec jsonb, result jsonb, error text) RETURNS tsvector
LANGUAGE sql IMMUTABLE AS $$
    SELECT setweight(to_tsvector('english'::regconfig, left(coalesce(spec ->> 'prompt', ''), 100000)), 'A') ||
           tasks_search_outcome(result, error)
$$;
-- +goose StatementEnd

-- A batch of tasks is one INSERT: its vectors are one INSERT too.
-- +goose StatementBegin
CREATE FUNCTION task_search_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO task_search (task_id, search)
        SELECT id, tasks_search_vector(spec, result, error) FROM new_tasks;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION task_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE task_search SET search = CASE
        WHEN NEW.spec IS NOT DISTINCT FROM OLD.spec
            THEN ts_filter(search, '{a}') || tasks_search_outcome(NEW.result, NEW.error)
        ELSE tasks_search_vector(NEW.spec, NEW.result, NEW.error) END
    WHERE task_id = NEW.id;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER task_search_insert AFTER INSERT ON tasks
    REFERENCING NEW TABLE AS new_tasks
    FOR EACH STATEMENT EXECUTE FUNCTION task_search_insert();
CREATE TRIGGER task_search_update AFTER UPDATE OF spec, result, error ON tasks
    FOR EACH ROW
    -- The answer and the reason first: an end changes them, and the spec,
    -- the larger value, is then compared once, by the function.
    WHEN (OLD.result IS DISTINCT FROM NEW.result OR OLD.error IS DISTINCT FROM NEW.error
          OR OLD.spec IS DISTINCT FROM NEW.spec)
    EXECUTE FUNCTION task_search_update();

-- +goose Down
DROP TRIGGER task_search_update ON tasks;
DROP TRIGGER task_search_insert ON tasks;
DROP FUNCTION task_search_update();
DROP FUNCTION task_search_insert();
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tasks_search_vector(spec jsonb, result jsonb, error text) RETURNS tsvector
LANGUAGE sql IMMUTABLE AS $$
    SELECT setweight(to_tsvector('english'::regconfig, left(coalesce(spec ->> 'prompt', ''), 100000)), 'A') ||
           setweight(to_tsvector('english'::regconfig, left(coalesce(result ->> 'final_text', ''), 100000)), 'B') ||
           setweight(to_tsvector('english'::regconfig, left(coalesce(error, ''), 100000)), 'C')
$$;
-- +goose StatementEnd
DROP FUNCTION tasks_search_outcome(jsonb, text);
ALTER TABLE tasks ADD COLUMN search tsvector;
UPDATE tasks SET search = s.search FROM task_search s WHERE s.task_id = tasks.id;
DROP TABLE task_search;
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
CREATE INDEX tasks_search_idx ON tasks USING gin (search);
