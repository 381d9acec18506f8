// Package gctune gives the fleet's long-running binaries (the worker, the
// dispatcher and agentfleet-dev) a garbage-collector target suited to a
// server rather than Go's default, which is tuned for small heaps.
//
// Decision: unless the operator set GOGC, the collector runs at
// GCPercent (400): the heap may grow to five times the live heap before a
// collection, instead of twice. A worker's live heap is small (a few
// megabytes plus about 130 KB per open session), so this costs tens of
// megabytes and saves about 15 % of a worker's CPU on short tasks (see
// docs/operations.md, "Garbage collection"). So that a larger target can
// never push a process out of its memory, the higher percentage comes
// with a soft memory limit: GOMEMLIMIT when the operator set it, else
// LimitFraction of the cgroup's memory limit, or of the host's memory
// when the process has no cgroup limit. Near that limit the collector
// runs as often as needed, whatever the percentage.
//
// An operator's GOGC (including GOGC=off) is left alone entirely, and so
// is an operator's GOMEMLIMIT: the runtime already applied both.
package gctune
