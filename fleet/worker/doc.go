// Package worker is the worker side of the fleet: it claims task messages
// from JetStream, runs their agent sessions durably and settles the
// messages. Subagents become child tasks (package spawn), every turn is
// recorded (the recorder), every event published (package eventpump), and a
// session waiting for its children is parked, holding nothing.
//
// # Workers
//
// A Worker (New, Run) reserves a session slot, then pulls one task
// message (its own subject <prefix>.tasks.worker.<id> first, then its
// queues), and claims the task in the store by compare-and-set, so two
// workers never both run a task. A worker pool (Config.Tenants) fails a
// claimed task of another tenant with tenant_not_served instead of running
// it (tenants.go). A running task whose heartbeat is older
// than Config.StaleAfter may be taken over (its worker died). It
// then builds the environment (a fresh local workspace under
// Config.WorkspaceRoot, cloned at the spec's ref within
// policy.repositories (clone.go, internal/gitsource) from the worker's
// mirror of the repository, fetched per task, the clone borrowing its
// objects (mirror.go), inside a sandbox of the task's, as its uid, or
// copied from the snapshot of an earlier task's environment.setup on the
// same repository, commit and image (setup.go); a working_dir under
// one of policy.shared_roots, or a subagent's in its parent's workspace,
// opened beneath its root with links refused (workspace.go,
// internal/beneath); or SSH with the
// key reference resolved from Config.SSHKeys), the profile and the
// session, serves control requests (steer, follow_up, abort, configure,
// status) on the task's tenant's control subject, stamps heartbeats (the store's, every HeartbeatInterval, which
// is also how a worker notices a cancel it missed; the message's, every
// AckWait/3), runs the session and maps the outcome:
//
//   - completed: succeeded, with TaskResult (final text, turns, usage,
//     cost) and the `git diff` of a git workspace as the "diff" artifact;
//     ack. A spec with checks runs them first (package checks, the hook
//     in checks.go), giving failures back to the session up to its repair
//     rounds, and fails with checks_failed when they never pass; a spec
//     with a delivery then delivers (package delivery) and fails with
//     delivery_failed when that does not complete.
//   - parked on a subagent: waiting (see Subagents); ack.
//   - a retryable model error (rate limit, overload, 5xx, transport): the
//     task goes back to queued and the message is naked with the
//     provider's retry-after, else an exponential backoff; the next
//     delivery resumes it. A rate limit also holds every call to that
//     provider on this worker until the retry-after has passed (package
//     fleet/models holds the model clients).
//   - a permanent error (authentication, invalid request, an environment
//     or profile this worker refuses, a corrupt message or spec): failed
//     with a reason; term.
//   - turn or round limit, wall time, token or cost limit: failed with the
//     limit as reason; ack.
//   - abort over control: cancelled ("aborted"); a task cancelled in the
//     store (taskops.Completer.CancelTree): cancelled.
//
// Every end goes through the worker's taskops.Completer (w.ends): the
// fenced write, the metric, SESSION_END, the parent and the children.
//
// Messages whose task is already final are only acked. Every final state
// is followed, idempotently, by waking the parent and cancelling live
// children (unless the spec's ChildPolicy is let_run); a redelivered
// message of a final task repeats that, in case a crash cut it short.
//
// # Durability and resume
//
// Every turn is written to the store (the Recorder, store.AppendTurns with
// seq = turn index + 1) before the loop goes on; a tool call's full output
// is stored (PutToolOutput) before its TOOL_CALL_END event is published. A
// redelivered task is resumed, not restarted: its history is loaded and
// agent.Session.Continue goes on from the last recorded turn. Tool calls
// of the last assistant turn whose results were not recorded run again, so
// tools run at least once. Workers keep nothing that cannot be rebuilt: a
// local workspace survives only on its worker (a task resumed elsewhere
// gets a fresh one; a parked parent with a local workspace is resumed on
// its own worker's subject, so a worker id must be stable across restarts).
//
// # Events
//
// Every agent event becomes a queue.Event on
// <prefix>.events.<tenant>.<root>.<task>.<kind> (the tenant of the task's
// spec) with the tenant, root and parent task ids and a
// seq that is gapless per session, also across runs on different workers
// (a resumed session continues after the last event in EVENTS; events lost
// with a killed worker were never stored, so no gap appears). The final
// SESSION_END (KindSessionEnd, SessionEndData) is published, confirmed,
// only when the task reaches its final state; parks and hand-backs do not
// end a session.
//
// # Shutdown and halt
//
// Shutdown drains: the worker stops pulling, gives running sessions
// Config.DrainGrace to finish, then aborts the rest, puts their tasks
// back to queued and naks their messages at once, so another worker
// resumes them from their recorded turns; Run then returns nil and
// `worker run` exits 0 (it calls Shutdown on SIGTERM or SIGINT).
//
// Cancelling Run's context halts the worker as a killed process would:
// everything it does runs under that context, so its sessions stop at
// once, it settles no message (each is abandoned) and writes nothing more.
// The messages are redelivered after AckWait and their tasks resumed
// elsewhere once their heartbeat is stale. Tests kill workers this way; a
// second signal to `worker run` during a drain does too.
//
// # Settling
//
// The code that handles a delivery decides and returns a settlement (ack,
// nak with a delay, term with a reason, abandon); apply, in settle.go, is
// the one place that carries it out, counts it and bounds it in time.
//
// # Subagents
//
// The worker's agent.Spawner (package fleet/worker/internal/spawn, built
// per run by newSpawner) makes every spawn_agent a child task (parent,
// root, depth + 1, the parent's environment and profile, the requested or
// the parent's current model, its own turn limit), created with the
// idempotency key spawn:<parent>:<call-id> so a resumed parent re-running
// the call gets the same child. The agent id the model sees is the child
// task id. Children of a local, non-shared workspace go to the spawning
// worker's own subject (they see its files); children of an SSH or
// shared-volume environment go to the parent's queue. A child that may
// write, of a git workspace, works in a git worktree of its own, merged
// back into the parent's tree by the parent's wait (a conflict is the
// wait's result); see "Worktrees" in package spawn. The depth limit is
// the spec's MaxSubagentDepth (default 1), enforced by the session with a
// model-facing error; unfinished children per parent are capped by
// MaxLiveChildren (Config.MaxLiveChildren, 32, when the spec has
// none: computed per run, never written into a spec, so children do not
// inherit the parent's worker's default).
//
// wait returns at once for a child that has ended. Otherwise the session
// parks (agent.ErrParked): its history up to the pending wait call is
// recorded (with the round's earlier results), the task becomes waiting
// with WaitingFor (the children of every pending wait call of the round and
// a wait id), its message is acked and its slot freed: a waiting parent
// holds no slot, memory or message, so a fleet cannot deadlock on waiting
// parents. When the last awaited child ends, the worker that recorded the
// end enqueues the parent's resume with the message id
// the router's resume id (parent, wait id): children ending together wake it
// once. The parking worker checks the children again after writing
// waiting, so a child ending in between is not missed. Any worker (the
// parent's own, for a local workspace) then claims the parent and re-runs
// the wait, which now returns the child's result.
//
// Every tool call is checked against the operator's permission policy
// (Config.Permissions) narrowed by the spec's; a spec that widens it fails
// not_allowed. A call the policy asks about parks the session the same way,
// with the call in WaitingFor.Approvals (and its expiry, after
// Config.ApprovalTimeout); package fleet/approval records a person's answer
// in the history and enqueues the resume, and the re-run round applies it.
//
// send_input steers a running child over its control subject; for a
// queued or parked child the input is stored (an "input" artifact,
// spawn.StoreInput) and injected as steering when it next runs; an ended
// (succeeded or failed) child is reopened: the input is stored, the task
// goes back to queued and a deduplicated input message runs it, the input
// becoming a new user turn after its answer. Steering that arrives during
// a child's final model call is run as a new input before the run ends;
// input stored while the run ends reopens the child at its end, succeeded
// or failed. A cancelled child refuses input. When the message after a
// reopen cannot be sent, the child stays queued with its input, and the
// next send_input to a queued child that ran before sends one again.
// close_agent, like a cancel through the API, uses Completer.CancelTree to
// cancel a whole subtree: queued and waiting descendants never start
// again, running ones are aborted over control (or at their next
// heartbeat).
//
// # Dead letters
//
// Every worker runs a dead-letter watcher (they share one durable consumer,
// so each dead letter is handled by one of them) with the one rule of
// taskops.HandleDeadLetter: a task whose message exhausted its deliveries,
// or was terminated, ends failed with the reason dead_letter unless
// already final, through the completer, so a parent waiting for it wakes.
// A dispatcher may watch as well, with the same rule.
//
// # Unpriced models
//
// A task whose cost is counted (limits.max_cost_usd, a label with a
// budget) on a model without a price fails before its session with the
// reason unpriced_model, its error naming the model and the
// prices.<model> to set: failed, not held, because nothing in the fleet
// would release the hold (the fix is this worker's configuration). Calls of
// unpriced models that do run are counted in unpriced_calls_total (see
// unpriced.go).
//
// # Best of N
//
// A task whose spec asks for attempts (fleet.BestOfN) runs no session: its
// run coordinates (attempts.go). The first run creates the attempts, child
// tasks with the idempotency keys fleet.AttemptKey, each the task's spec
// with its attempt model and no delivery, enqueues them on the task's
// queue (each gets its own fresh workspace) and parks on them; with
// attempt_pick "first" the wait is a FirstPass one, which the completer
// ends at the first attempt that succeeds (its checks passed). The run
// that finds the winner cancels the other attempts through the completer
// (CancelTree, reason attempt_lost), applies the winner's diff artifact to
// a fresh clone inside the task's sandbox, stores it as the task's diff,
// delivers it, and ends the task through the completer with the winner's
// result and TaskResult.Attempts. No winner fails it with attempts_failed.
// A redelivered or repeated coordinator run finds the same attempts, so
// every step is safe to run again.
//
// # Concurrency
//
// A Worker's exported methods are safe for concurrent use. Each delivery is
// handled by one goroutine that owns its run; control requests and abort
// reach the run from other goroutines through its mutex. The event pump
// goroutine of a run owns the session's event seq.
package worker
