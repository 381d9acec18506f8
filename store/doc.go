// Package store persists agentfleet's tasks, sessions, turns, tool outputs
// and artifacts behind one interface, Store, with two drivers:
// store/postgres (pgx/v5, production) and store/sqlite (modernc.org/sqlite,
// the embedded default for dev mode and single-machine use). Both pass the
// one conformance suite, storetest.Exercise. The package is a leaf: it
// imports neither the agent nor the fleet, and nothing above it imports a
// database driver.
//
// # Calls
//
// Every method takes a context and a params struct and returns typed rows.
// Input is checked before any I/O by the Prepare functions shared by the
// drivers, so both reject the same input with the same *InvalidError (or
// *PayloadTooLargeError, over Limits). Backend errors are translated at the
// seam into ErrNotFound, ErrConflict, ErrInvalid or a *RetryableError
// (a dropped connection, a restarting server, a serialization failure); test
// them with errors.Is and IsRetryable.
//
// # Task lifecycle
//
// A task is created queued and moves through the states below (drawn in
// docs/architecture.md, Task lifecycle). Every move is a compare-and-set on
// the expected state, so two workers never both own a task:
//
//	queued  -> running (ClaimTask) | cancelled | failed (dead letter)
//	running -> succeeded | failed | cancelled | waiting (parked) |
//	           queued (given back: shutdown or retryable failure) |
//	           running (ClaimTask with StaleBefore: takeover of a dead worker's task)
//	waiting -> running (ClaimTask From waiting) | queued (woken for any worker) |
//	           cancelled | failed
//	succeeded | failed -> queued (reopened: new input for an ended task)
//
// Cancelled is final. Succeeded and failed are end states (Terminal) that
// change only by a reopen, when new input arrives for the task (send_input
// to a child that ended): the task is queued again, its FinishedAt,
// WaitingFor, Result and Error are cleared (so the previous outcome is not
// mistaken for the current one, and the next end writes its own), while
// Attempts, StartedAt and its session's turns are kept, so it continues
// where it stopped. CanTransition holds the table. A claim increments Attempts and records the worker; a
// heartbeat succeeds only for the owning worker, so ErrConflict from
// HeartbeatTask tells a worker it lost the task. CancelSubtree cancels a task
// and all its active descendants in one transaction and returns them with
// their previous state, so the caller can abort the ones that were running.
//
// # A cancelled parent's children never start
//
// ClaimTask refuses (ErrConflict, naming the parent) a task whose direct
// parent is cancelled, whatever state the task is in. That covers a child a
// still-running session spawned after its tree was cancelled: the cancel
// cannot see a task that does not exist yet, but the task is created under a
// cancelled parent and can never be claimed; its worker then cancels it. The
// direct parent suffices: CancelSubtree cancels every existing descendant, so
// below a cancelled ancestor every active path passes a cancelled parent.
// Postgres makes the rule hold under concurrency: a claim locks the parent
// row and reads its committed state, and CancelSubtree locks parents before
// children and repeats its pass until it finds nothing, so a claim either
// commits before the cancel (which then cancels the task) or is refused.
// Once CancelSubtree returns, no task of the subtree starts.
//
// # Turns are checkpoints
//
// A session's history is an append-only sequence of turns numbered 1, 2, 3...
// with no gaps. AppendTurns writes a batch atomically together with the
// session's usage totals: the batch must start at Session.LastSeq+1. A seq
// that exists already is ErrConflict and writes nothing, so a retried append
// can never duplicate a turn. If a connection breaks during commit the caller
// cannot know whether the batch landed: the retry then returns ErrConflict,
// and LoadTurns shows what is there.
//
// # JSON and sizes
//
// Specs, results, configs and turn payloads are JSON documents checked for
// validity and size (Limits.MaxPayloadBytes, default 4 MiB). Postgres stores
// the queried ones (spec, result, labels, waiting-for, config) as JSONB, which
// normalizes whitespace and key order; turn payloads and usage are stored
// verbatim, so a turn reads back byte for byte as written in both drivers.
// Tool outputs and artifacts are byte blobs capped by Limits.MaxBlobBytes
// (default 64 MiB).
//
// # Times
//
// Times are UTC with microsecond precision (Timestamp), taken from the
// driver's clock. ListTasks pages newest first with an opaque keyset cursor
// (created time, id), stable while tasks are added.
//
// # Concurrency
//
// Store implementations are safe for concurrent use by many goroutines and,
// for Postgres, many processes. SQLite serializes writes through one
// connection and is meant for one process.
//
// # Testing
//
// See docs/contributing.md: store/pgtest starts a throwaway Postgres for
// tests when no AGENTFLEET_TEST_DATABASE_URL is set.
package store
