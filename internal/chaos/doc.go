// Package chaos runs a production-shaped fleet from the built binaries and
// breaks it on purpose, then checks that no work was lost.
//
// The fleet is separate processes: a three-node JetStream cluster
// (nats-server built from the module, configured from
// deploy/nats/nats.conf, streams with three replicas), a throwaway
// Postgres (internal/pgcluster), the scripted model server (simllm
// -scripted, each task's prompt carrying its own script), `dispatcher
// serve` and three `worker run`. Each scenario submits a backlog of tasks
// that sleep in the shell and answer, injects one fault once the backlog is
// under way (a worker killed or drained, a NATS node killed, Postgres
// restarted, down or its connections cut, the worker of parked parents
// killed, or killed for good with its disk while local trees' children run
// through the fleet git store: localtree.go), waits for the backlog to end and verifies it from outside:
// every task succeeded and none is stuck; each task has exactly the turns
// its script implies and gapless seqs; the EVENTS stream holds each
// session's events once, without gaps, ending in SESSION_END; the model
// requests beyond one per round and the recovery time are reported.
//
// Timings are shortened (ack wait and stale_after 20 s) so that a run fits
// in CI. cmd/chaos is the command; `make chaos` and `make chaos-short` run
// it. docs/chaos.md has the scenarios and a run's figures.
package chaos
