-- +goose Up
-- Text search over tasks (issue 35), dev mode: an FTS5 table of each
-- task's prompt, final answer and failure reason, keyed by the task id
-- (not the rowid, which VACUUM may renumber), kept by triggers.
CREATE VIRTUAL TABLE tasks_fts USING fts5(
    id UNINDEXED, prompt, answer, failure, tokenize = 'porter unicode61'
);
INSERT INTO tasks_fts (id, prompt, answer, failure)
SELECT id, coalesce(json_extract(spec, '$.prompt'), ''),
       coalesce(json_extract(result, '$.final_text'), ''), error
FROM tasks;

-- +goose StatementBegin
CREATE TRIGGER tasks_fts_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO tasks_fts (id, prompt, answer, failure)
    VALUES (new.id, coalesce(json_extract(new.spec, '$.prompt'), ''),
            coalesce(json_extract(new.result, '$.final_text'), ''), new.error);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER tasks_fts_update AFTER UPDATE OF spec, result, error ON tasks
WHEN old.spec IS NOT new.spec OR old.result IS NOT new.result OR old.error IS NOT new.error BEGIN
    DELETE FROM tasks_fts WHERE id = old.id;
    INSERT INTO tasks_fts (id, prompt, answer, failure)
    VALUES (new.id, coalesce(json_extract(new.spec, '$.prompt'), ''),
            coalesce(json_extract(new.result, '$.final_text'), ''), new.error);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER tasks_fts_delete AFTER DELETE ON tasks BEGIN
    DELETE FROM tasks_fts WHERE id = old.id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER tasks_fts_delete;
DROP TRIGGER tasks_fts_update;
DROP TRIGGER tasks_fts_insert;
DROP TABLE tasks_fts;
