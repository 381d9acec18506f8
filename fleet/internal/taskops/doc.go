// Package taskops holds the task lifecycle rules that the dispatcher and
// the workers share, written once so the two sides cannot drift:
//
//   - the completer (Completer.End, Completer.CancelTree): the one way a
//     task ends, whoever ends it, with the one after-end rule (wake a
//     waiting parent, cancel or keep children by child_policy, count the
//     end once, announce it where the caller can); a parent waiting with
//     WaitingFor.FirstPass (a best-of-N task, fleet.BestOfN) wakes at the
//     first child that succeeded rather than when all have ended;
//   - the router (Target and the *Message constructors in route.go): the
//     one place that decides where a task's messages go and under which
//     deduplication id;
//   - the dead-letter rule (HandleDeadLetter), an end like any other.
//   - the reopen (Completer.Reopen, reopen.go): the one way an ended task
//     (succeeded or failed) goes back to queued with a stored input
//     (StoreInput), a compare-and-set, its message built by the router
//     (ReopenMessage); the end of the round it starts goes through End.
//
// Every rule here is idempotent: a task already final is left as it is,
// and the after-end rule may run again, so a rule applied twice (two
// watchers of one dead letter, a redelivered message of a finished task)
// does no harm.
//
// The ends, and who calls End with which constructor:
//
//	worker run ends (succeeded, failed, cancelled, aborted)  Succeeded, Failed, Cancelled
//	worker, before a session (not allowed, environment,
//	unpriced model: priced.go)                               Failed
//	worker, a spec or message that cannot run                FailedAnyState
//	worker, a task whose parent is cancelled                 Orphaned
//	worker, a spent budget at claim or in a run              BudgetCancelled, Cancelled
//	dispatcher or worker, a dead letter                      DeadLettered (HandleDeadLetter)
//	dispatcher cancel, a parent closing a child,
//	an ended parent's children                               CancelTree
//
// Approvals and budget holds move tasks between active states (waiting,
// running, queued); they are not ends, and their messages go through the
// router.
package taskops
