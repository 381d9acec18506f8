// Package taskops holds the lifecycle rules that both the dispatcher and
// the workers apply to tasks in the store, written once so the two sides
// cannot drift: failing a task from whatever active state it is in
// (FailFromAnyState), recording a dead letter (HandleDeadLetter) and
// cancelling a subtree (CancelTree).
//
// Every function here is idempotent: a task already final is left as it
// is, so a rule applied twice (two watchers of one dead letter, a
// redelivered message of a finished task) does no harm.
package taskops
