-- +goose Up
-- Times are INTEGER microseconds since the Unix epoch (UTC); JSON is TEXT.
CREATE TABLE tasks (
    id              TEXT PRIMARY KEY,
    parent_id       TEXT REFERENCES tasks (id) ON DELETE CASCADE,
    root_id         TEXT NOT NULL,
    depth           INTEGER NOT NULL DEFAULT 0,
    state           TEXT NOT NULL CHECK (state IN ('queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled')),
    queue           TEXT NOT NULL,
    priority        INTEGER NOT NULL DEFAULT 0,
    spec            TEXT NOT NULL,
    result          TEXT,
    error           TEXT NOT NULL DEFAULT '',
    attempts        INTEGER NOT NULL DEFAULT 0,
    worker_id       TEXT NOT NULL DEFAULT '',
    idempotency_key TEXT UNIQUE,
    labels          TEXT NOT NULL DEFAULT '{}',
    waiting_for     TEXT,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    started_at      INTEGER,
    heartbeat_at    INTEGER,
    finished_at     INTEGER
) STRICT;
CREATE INDEX tasks_created_idx ON tasks (created_at DESC, id DESC);
CREATE INDEX tasks_state_created_idx ON tasks (state, created_at DESC, id DESC);
CREATE INDEX tasks_active_queue_idx ON tasks (queue, priority DESC, created_at)
    WHERE state IN ('queued', 'running', 'waiting');
CREATE INDEX tasks_root_idx ON tasks (root_id, depth, created_at);
CREATE INDEX tasks_parent_idx ON tasks (parent_id, created_at) WHERE parent_id IS NOT NULL;

CREATE TABLE sessions (
    id                 TEXT PRIMARY KEY,
    task_id            TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    profile            TEXT NOT NULL DEFAULT '',
    provider           TEXT NOT NULL DEFAULT '',
    model              TEXT NOT NULL DEFAULT '',
    state              TEXT NOT NULL,
    config             TEXT,
    last_seq           INTEGER NOT NULL DEFAULT 0,
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens   INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    cost_usd           REAL NOT NULL DEFAULT 0,
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL
) STRICT;
CREATE INDEX sessions_task_idx ON sessions (task_id, created_at);

CREATE TABLE turns (
    session_id TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    kind       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    usage      TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE tool_outputs (
    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    call_id    TEXT NOT NULL,
    tool       TEXT NOT NULL,
    output     BLOB NOT NULL,
    is_error   INTEGER NOT NULL DEFAULT 0,
    size       INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (session_id, call_id)
) STRICT;

CREATE TABLE artifacts (
    task_id      TEXT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    kind         TEXT NOT NULL,
    name         TEXT NOT NULL DEFAULT '',
    content_type TEXT NOT NULL,
    content      BLOB NOT NULL,
    size         INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    PRIMARY KEY (task_id, kind, name)
) STRICT;

-- +goose Down
DROP TABLE artifacts;
DROP TABLE tool_outputs;
DROP TABLE turns;
DROP TABLE sessions;
DROP TABLE tasks;
