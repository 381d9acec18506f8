-- +goose Up
-- Postgres's 00007 makes a task's end keep the prompt's part of the search
-- vector instead of parsing the prompt again. SQLite's FTS5 triggers index
-- a whole row at each update (an FTS5 row has no partial update); this
-- migration only keeps the two dialects' versions in step.
SELECT 1;

-- +goose Down
SELECT 1;
