// Package sqlite is the embedded store.Store: one database file through
// modernc.org/sqlite (pure Go, no cgo). It backs dev mode and
// single-machine use; for a fleet of processes use store/postgres.
//
// # Connections
//
// The file runs in WAL mode with a busy timeout. All writes go through a
// pool of exactly one connection and every write transaction begins
// IMMEDIATE, so writes are serialized: compare-and-set transitions and turn
// appends cannot race, and a writer never fails to upgrade a read lock.
// Reads use a separate pool of read-only connections (query_only), which
// WAL lets run while the writer writes. A read right after a write sees it.
//
// # Schema
//
// migrations/sqlite, applied on Open unless Config.NoMigrate. Tables are
// STRICT; ids are text, times INTEGER microseconds since the epoch (UTC),
// JSON text stored verbatim. Errors are translated in errors.go: constraint
// violations become store.ErrConflict (unique) or store.ErrNotFound (foreign
// key), SQLITE_BUSY and SQLITE_LOCKED a *store.RetryableError.
package sqlite
