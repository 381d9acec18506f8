-- +goose Up
CREATE TABLE tasks (
    id              uuid PRIMARY KEY,
    parent_id       uuid REFERENCES tasks (id) ON DELETE CASCADE,
    root_id         uuid NOT NULL,
    depth           integer NOT NULL DEFAULT 0,
    state           text NOT NULL CHECK (state IN ('queued', 'running', 'waiting', 'succeeded', 'failed', 'cancelled')),
    queue           text NOT NULL,
    priority        integer NOT NULL DEFAULT 0,
    spec            jsonb NOT NULL,
    result          jsonb,
    error           text NOT NULL DEFAULT '',
    attempts        integer NOT NULL DEFAULT 0,
    worker_id       text NOT NULL DEFAULT '',
    idempotency_key text UNIQUE,
    labels          jsonb NOT NULL DEFAULT '{}',
    waiting_for     jsonb,
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    started_at      timestamptz,
    heartbeat_at    timestamptz,
    finished_at     timestamptz
);

-- Listing newest first, and keyset pagination on (created_at, id).
CREATE INDEX tasks_created_idx ON tasks (created_at DESC, id DESC);
-- Listing and counting by state; terminal states are most rows.
CREATE INDEX tasks_state_created_idx ON tasks (state, created_at DESC, id DESC);
-- Active work is a small fraction of all tasks: partial indexes keep it cheap.
CREATE INDEX tasks_active_queue_idx ON tasks (queue, priority DESC, created_at)
    WHERE state IN ('queued', 'running', 'waiting');
CREATE INDEX tasks_running_heartbeat_idx ON tasks (heartbeat_at)
    WHERE state = 'running';
-- Trees and children.
CREATE INDEX tasks_root_idx ON tasks (root_id, depth, created_at);
CREATE INDEX tasks_parent_idx ON tasks (parent_id, created_at) WHERE parent_id IS NOT NULL;
-- Label filters use containment (labels @> '{"k":"v"}').
CREATE INDEX tasks_labels_idx ON tasks USING gin (labels jsonb_path_ops);

CREATE TABLE sessions (
    id                 uuid PRIMARY KEY,
    task_id            uuid NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    profile            text NOT NULL DEFAULT '',
    provider           text NOT NULL DEFAULT '',
    model              text NOT NULL DEFAULT '',
    state              text NOT NULL,
    config             jsonb,
    last_seq           bigint NOT NULL DEFAULT 0,
    input_tokens       bigint NOT NULL DEFAULT 0,
    output_tokens      bigint NOT NULL DEFAULT 0,
    reasoning_tokens   bigint NOT NULL DEFAULT 0,
    cache_read_tokens  bigint NOT NULL DEFAULT 0,
    cache_write_tokens bigint NOT NULL DEFAULT 0,
    cost_usd           double precision NOT NULL DEFAULT 0,
    created_at         timestamptz NOT NULL,
    updated_at         timestamptz NOT NULL
);
CREATE INDEX sessions_task_idx ON sessions (task_id, created_at);

-- Turns are the big table (hundreds of millions of rows): see
-- store/postgres/doc.go. No foreign key: AppendTurns locks and updates the
-- session row in the same transaction, which already proves it exists.
-- payload and usage are json (verbatim text), not jsonb: they are written
-- once, read back whole and never queried inside.
CREATE TABLE turns (
    session_id uuid NOT NULL,
    seq        bigint NOT NULL,
    kind       text NOT NULL,
    payload    json NOT NULL,
    usage      json,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (session_id, seq)
);
-- Time-range scans and retention deletes: rows arrive in time order, so a
-- BRIN index is a few pages instead of a b-tree of billions of entries.
CREATE INDEX turns_created_brin ON turns USING brin (created_at) WITH (pages_per_range = 64);

CREATE TABLE tool_outputs (
    session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    call_id    text NOT NULL,
    tool       text NOT NULL,
    output     bytea NOT NULL,
    is_error   boolean NOT NULL DEFAULT false,
    size       bigint NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (session_id, call_id)
);

CREATE TABLE artifacts (
    task_id      uuid NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    kind         text NOT NULL,
    name         text NOT NULL DEFAULT '',
    content_type text NOT NULL,
    content      bytea NOT NULL,
    size         bigint NOT NULL,
    created_at   timestamptz NOT NULL,
    PRIMARY KEY (task_id, kind, name)
);

-- +goose Down
DROP TABLE artifacts;
DROP TABLE tool_outputs;
DROP TABLE turns;
DROP TABLE sessions;
DROP TABLE tasks;
