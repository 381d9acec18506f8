// Package postgres is the production store.Store: Postgres through a pgx/v5
// pool. Nothing outside this package sees a pgx type; errors are translated
// in translate (errors.go): unique violations become store.ErrConflict,
// foreign-key violations store.ErrNotFound, and connection failures, server
// shutdowns, serialization failures and deadlocks a *store.RetryableError.
// The pool drops broken connections and dials new ones, so after a server
// restart the next calls succeed without intervention.
//
// # Schema
//
// migrations/postgres holds the schema; run Migrate or `dispatcher migrate
// up` before New. Queried JSON (spec, result, labels, waiting-for, session
// config) is JSONB; times are timestamptz. Active tasks are a small fraction
// of all tasks, so the queue and heartbeat indexes are partial on the
// active states; labels have a GIN index for containment filters.
//
// # Writes
//
// Compare-and-set transitions are single UPDATE ... WHERE state = expected
// RETURNING statements: under READ COMMITTED a concurrent loser re-checks the
// row after the winner commits and matches nothing, so exactly one claimer
// wins. Such a statement finds its row by id and writes the expected state
// as `(state = ...) IS TRUE`, a condition no index can serve: otherwise,
// planned from statistics taken while almost no task was in that state
// (a backlog analyzed before the workers took it), `id = $1 AND state =
// 'running'` may go through tasks_state_created_idx, whose id is its last
// column, and read the entry of every running task to find one, which made
// each claim, heartbeat and end O(tasks in that state). AppendTurns is one statement (a CTE that advances sessions.last_seq
// only when the batch continues it, then inserts the batch from arrays with
// unnest): atomic, one round trip per batch, and the session row lock
// serializes appenders of one session. CreateTasks inserts a whole batch
// with one statement (the columns sent as arrays and unnested, see
// insertTasks), so a batch of 10,000 tasks is two round trips; a batch in
// which a task's parent is another task of the batch pipelines one insert
// per task instead.
//
// # Hundreds of millions of turns
//
// turns is the table that grows without bound. We chose a plain table with
// a BRIN index over range partitioning:
//
//   - Every read of turns is "one session, by seq" (load a history, resume
//     after a crash). The primary key (session_id, seq) serves it in a few
//     page reads at any table size; range partitions by time would not prune
//     for it and would force created_at into every unique key.
//   - Rows arrive in time order, so BRIN on created_at costs a few pages
//     (versus a b-tree of billions of entries) and serves time-range scans
//     and retention: DELETE FROM turns WHERE created_at < $1 in batches.
//   - There is no foreign key on turns: the append statement already locks
//     and updates the session row, which proves it exists, and skipping the
//     FK check saves an index probe per row.
//   - payload and usage are json, not jsonb: stored verbatim (a turn reads
//     back byte for byte, which provider items such as signed reasoning need),
//     cheaper to insert, and never queried inside.
//
// When retention by dropping whole months becomes necessary, turns can be
// converted to a table partitioned by range on created_at with a primary key
// of (session_id, seq, created_at); the store's queries need no change,
// because they always name the session.
package postgres
