-- +goose Up
-- A task's end no longer parses its prompt again. The search vector is the
-- prompt's lexemes (weight A), then the final answer's (B), then the
-- failure reason's (C), concatenated; an update that leaves the spec as
-- it was keeps the A part of the old vector (ts_filter keeps its lexemes
-- with their positions, so the concatenation that follows shifts the B
-- and C positions exactly as before) and parses only the answer and the
-- reason. An empty part is not parsed at all. The vector is the same as
-- tasks_search_vector's (store/postgres/search_test.go compares them).

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
CREATE OR REPLACE FUNCTION tasks_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND OLD.search IS NOT NULL AND NEW.spec IS NOT DISTINCT FROM OLD.spec THEN
        NEW.search := ts_filter(OLD.search, '{a}') || tasks_search_outcome(NEW.result, NEW.error);
    ELSE
        NEW.search := tasks_search_vector(NEW.spec, NEW.result, NEW.error);
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION tasks_search_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search := tasks_search_vector(NEW.spec, NEW.result, NEW.error);
    RETURN NEW;
END
$$;
-- +goose StatementEnd
DROP FUNCTION tasks_search_outcome(jsonb, text);
