-- +goose Up
-- Text search over tasks (issue 35), dev mode: an FTS5 table of each
-- task's prompt, final answer and failure reason, kept by triggers. An
-- FTS5 table has no index but its rowid, and the tasks' own rowids may
-- be renumbered by VACUUM, so tasks_fts_ids gives each task a stable
-- rowid in it: a task's end then replaces its row by rowid, not by
-- scanning the whole table for its id.
CREATE TABLE tasks_fts_ids (rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE);
CREATE VIRTUAL TABLE tasks_fts USING fts5(
    id UNINDEXED, prompt, answer, failure, tokenize = 'porter unicode61'
);
INSERT INTO tasks_fts_ids (id) SELECT id FROM tasks;
INSERT INTO tasks_fts (rowid, id, prompt, answer, failure)
SELECT i.rid, t.id, coalesce(json_extract(t.spec, '$.prompt'), ''),
       coalesce(json_extract(t.result, '$.final_text'), ''), t.error
FROM tasks t JOIN tasks_fts_ids i ON i.id = t.id;

-- +goose StatementBegin
CREATE TRIGGER tasks_fts_insert AFTER INSERT ON tasks BEGIN
    INSERT INTO tasks_fts_ids (id) VALUES (new.id);
    INSERT INTO tasks_fts (rowid, id, prompt, answer, failure)
    VALUES ((SELECT rid FROM tasks_fts_ids WHERE id = new.id), new.id,
            coalesce(json_extract(new.spec, '$.prompt'), ''),
            coalesce(json_extract(new.result, '$.final_text'), ''), new.error);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER tasks_fts_update AFTER UPDATE OF spec, result, error ON tasks
WHEN old.spec IS NOT new.spec OR old.result IS NOT new.result OR old.error IS NOT new.error BEGIN
    DELETE FROM tasks_fts WHERE rowid = (SELECT rid FROM tasks_fts_ids WHERE id = old.id);
    INSERT INTO tasks_fts (rowid, id, prompt, answer, failure)
    VALUES ((SELECT rid FROM tasks_fts_ids WHERE id = new.id), new.id,
            coalesce(json_extract(new.spec, '$.prompt'), ''),
            coalesce(json_extract(new.result, '$.final_text'), ''), new.error);
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER tasks_fts_delete AFTER DELETE ON tasks BEGIN
    DELETE FROM tasks_fts WHERE rowid = (SELECT rid FROM tasks_fts_ids WHERE id = old.id);
    DELETE FROM tasks_fts_ids WHERE id = old.id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER tasks_fts_delete;
DROP TRIGGER tasks_fts_update;
DROP TRIGGER tasks_fts_insert;
DROP TABLE tasks_fts;
DROP TABLE tasks_fts_ids;
