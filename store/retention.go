package store

import (
	"context"
	"time"
)

// RetentionKind names the rows a retention sweep deletes.
type RetentionKind string

// The kinds of rows retention deletes. Sessions (with their usage and
// cost), tasks and the audit log are never deleted by it: spend stays
// accountable after the history behind it is gone.
const (
	RetainTurns       RetentionKind = "turns"
	RetainToolOutputs RetentionKind = "tool_outputs"
	RetainArtifacts   RetentionKind = "artifacts"
)

// RetentionKinds lists every RetentionKind.
var RetentionKinds = []RetentionKind{RetainTurns, RetainToolOutputs, RetainArtifacts}

// SweepParams selects the rows of one kind that a sweep deletes: those of
// tasks that ended (succeeded, failed, cancelled) before EndedBefore, in
// the tenants selected, whose tree holds no live task (queued, running or
// waiting): a live tree keeps everything of all its tasks, whatever their
// age (the floor). An artifact that is the newest of its kind and name
// across all tasks is kept too (it is what LatestArtifact answers: a
// repository's notes).
type SweepParams struct {
	Kind        RetentionKind // required
	EndedBefore time.Time     // required
	// Tenants, when not nil, keeps to these tenants; ExceptTenants leaves
	// these out (the tenants with a policy of their own, when sweeping by
	// the default policy).
	Tenants       []string
	ExceptTenants []string
	// Limit bounds the rows deleted in one call (default 1000, at most
	// 10000): a sweep is a series of short transactions that never hold
	// the store for long.
	Limit int
}

// Validate names the first wrong field.
func (p SweepParams) Validate() error {
	switch {
	case p.Kind != RetainTurns && p.Kind != RetainToolOutputs && p.Kind != RetainArtifacts:
		return invalidf("Kind", "%q is not a retention kind (want one of %v)", p.Kind, RetentionKinds)
	case p.EndedBefore.IsZero():
		return invalidf("EndedBefore", "is required: the tasks that ended before it are swept")
	case p.Limit < 0 || p.Limit > 10000:
		return invalidf("Limit", "must be from 0 (default 1000) to 10000, got %d", p.Limit)
	}
	return nil
}

// SweepLimit is p.Limit with its default.
func (p SweepParams) SweepLimit() int {
	if p.Limit == 0 {
		return 1000
	}
	return p.Limit
}

// Sweeper deletes the history of ended tasks past their retention. Both
// drivers implement it (storetest checks); it is apart from Store so
// that wrappers of Store need not.
type Sweeper interface {
	// Sweep deletes at most p.Limit rows that p selects, in one short
	// transaction, and returns how many it deleted: fewer than the limit
	// means nothing is left to delete for now.
	Sweep(ctx context.Context, p SweepParams) (int64, error)
}
