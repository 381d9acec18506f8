-- +goose Up
-- A running task's heartbeat (every 10 s by default) rewrote its tasks
-- row with a new entry in every index, because heartbeat_at was indexed
-- (tasks_running_heartbeat_idx, for the sweeps that look for running
-- tasks whose worker fell silent). With no index on heartbeat_at a
-- heartbeat can be a HOT update (the new row version on the same page,
-- no index entry at all), and the table now keeps 15 % of each page free
-- for them (new pages; existing ones as they are rewritten). The sweeps
-- find running tasks through tasks_state_created_idx, newest first as
-- ListTasks orders, and read heartbeat_at from the row: running tasks are
-- a fleet's slots, not its history. Claims lose an index entry too.
DROP INDEX tasks_running_heartbeat_idx;
ALTER TABLE tasks SET (fillfactor = 85);

-- +goose Down
ALTER TABLE tasks RESET (fillfactor);
CREATE INDEX tasks_running_heartbeat_idx ON tasks (heartbeat_at) WHERE state = 'running';
