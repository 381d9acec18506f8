-- +goose Up
-- Postgres's 00007 moves the search vectors into a table of their own and
-- makes a task's end keep the prompt's part instead of parsing the prompt
-- again. SQLite's FTS5 table is already apart from tasks, and its triggers
-- index a whole row at each update (an FTS5 row has no partial update);
-- this migration only keeps the two dialects' versions in step.
SELECT 1;

-- +goose Down
SELECT 1;
