// Package approval is the fleet side of permission approvals: a call the
// policy asks about parks its task until a person answers.
//
// # Lifecycle
//
// On the worker, a Parker is the session's agent.Approver: it notes the
// request and returns permission.ErrPending, so the session parks as a
// wait on a subagent does (no slot, no memory, no message in flight). The
// worker stores the pending calls in the task's WaitingFor.Approvals, with
// the time they expire, and the task is waiting.
//
// A person answers with Decide (the dispatcher's POST
// /v1/tasks/{id}/approvals/{call_id}, `dispatcher approve|deny`, the
// dashboard, the approvals control subject). Decide, in this order:
//
//  1. reads the task: it must be waiting for that call, else ErrNotPending
//     (a 409);
//  2. claims it from waiting for the pseudo-worker ClaimerID (a
//     compare-and-set: of two people answering at once, one wins and the
//     other gets ErrNotPending);
//  3. appends the answer to the session's history as a permission turn
//     (agent.AnswerTurn: the agent owns the turn format, so this package
//     encodes no turn of its own) and moves the task to queued, in one
//     store write fenced by that claim;
//  4. publishes a deduplicated resume to where the task runs (its worker
//     for an unshared local workspace, else its queue).
//
// The worker that claims the resume replays the round: the answered call
// finds its answer in the history and runs, or gets an error result with
// the person's reason. An answer with Remember applies to the later calls
// of the same tool that the same rule asks about, for the rest of the task.
// If the dispatcher dies between 2 and 3, the task stays running under
// the claimer with a heartbeat that goes stale; Sweep resumes it, and the
// session asks again. If the resume cannot be sent in 4 (NATS away), the
// answer is kept and the task queued; answering again sends the resume
// (with ErrNotPending saying the call was answered already).
//
// # Expiry
//
// Sweep, run by the dispatcher every minute, denies every pending call
// whose ExpiresAt has passed (By "expiry"), so an unanswered task does not
// wait for ever: the model is told no one answered in time.
package approval
