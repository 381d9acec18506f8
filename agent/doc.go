// Package agent is the coding-agent loop as a library: a Session pairs an
// llm.Client with a provider Profile (tools and system prompt) and an
// execenv.Environment, runs the agentic loop (model call, tool
// round, repeat until a text-only answer or a limit), and reports every step
// as an Event.
//
// # Sessions and the loop
//
// New builds a session in state IDLE. Submit processes one input and its
// follow-ups and blocks until done; the loop is a short sequence of named
// steps (checkLimits, buildRequest, callModel, recordAssistant,
// executeTools, drainSteering, detectLoop). States move IDLE -> PROCESSING
// -> IDLE | AWAITING_INPUT | CLOSED; an illegal move is a *TransitionError.
// AWAITING_INPUT means the last answer was text only and ended with a
// question mark: the model asked the user something.
//
// Exactly one input runs at a time. A Submit while one is running follows
// SessionConfig.QueueMode: queue (wait in FIFO order, at most MaxQueueDepth
// waiting, else ErrQueueFull), reject (ErrBusy) or interrupt (the running
// input stops with ErrInterrupted, calls left without results are answered
// with error results, then the new input runs).
//
// # Host control
//
// Steer, FollowUp, SetReasoningEffort, SetModel, Abort and Close are safe
// from any goroutine while the loop runs. Steering is injected after the
// current tool round (or before the first model call of the next input when
// idle) as a user message; follow-ups run after a natural completion.
// Effort and model changes apply to the next model call.
//
// # Events and back-pressure
//
// Subscribe returns a Subscription with its own queue. Every event has a
// session-wide gapless Seq, the time of the injected Clock and the session
// id. Emitting never blocks the loop: when a subscriber already holds
// Config.EventBuffer events, further deltas (ASSISTANT_TEXT_DELTA,
// TOOL_CALL_OUTPUT_DELTA) are dropped for it and counted in Dropped; all
// other events (START, END, TOOL_CALL_END, limits, errors, SESSION_END) are
// always queued, growing the queue beyond the buffer, so they are never
// lost. A subscriber that never reads therefore holds memory for the
// non-droppable events only. SESSION_START is emitted when the first input
// begins (so a subscriber attached right after New sees it); SESSION_END
// when the session closes, after which every subscription ends once
// drained. INPUT_DONE (our addition) closes each input with its stop
// reason; WARNING reports context use above 80% of the profile's window
// (the provider's token counts when reported, else 4 characters a token),
// and whatever a hook warns about; PARKED reports a park.
//
// # Hooks
//
// Config.Hooks run at five points (HookPoint): session_start right after
// SESSION_START, user_prompt_submit after USER_INPUT, pre_tool_use before
// each call (a block becomes the call's error result, with the hook's
// reason, and the tool does not run), post_tool_use after it (text a hook
// returns is appended to the result the model sees and to the full
// output), and session_stop before SESSION_END. Package agent/hooks runs
// configured shell and HTTP hooks.
//
// ASSISTANT_TEXT_START and ASSISTANT_TEXT_END bracket every model response
// (START when the first text token arrives, or just before END for a
// response without text); END carries the full text and reasoning.
// TOOL_CALL_END carries the full output; the model receives the truncated
// form from the tools pipeline, with a note naming read_tool_output. The
// round's turn keeps the whole output of each truncated result
// (Turn.FullOutputs, up to MaxKeptOutput bytes), and read_tool_output is
// registered as soon as one output was truncated or the session compacted
// (also when a resumed history shows either), so the model reads the rest
// instead of running the call again.
//
// # Secrets in tool output
//
// With Config.Redactor set (NewRedactor, from the host's name→value pairs
// of secrets), every tool's output is redacted in one place, after the
// post-tool hooks: each known value becomes "[redacted:NAME]" in the
// output deltas (a value split across two chunks included), TOOL_CALL_END,
// the recorded turn and what the model is sent. Values are matched
// exactly; those shorter than MinSecretLen are not redacted. Tool call
// arguments and the model's own text are not rewritten: the model never
// sees a redacted value, so it can only repeat one it was given.
//
// # The context pipeline
//
// A session outlives its model's context window (context.go, with the
// arithmetic in package compact). Before every model call it estimates the
// request: the input tokens reported for the previous request plus what
// was added since, at 4 characters a token scaled by a ratio calibrated on
// the session's reported usage. The window is SessionConfig.Context.Window,
// else the profile's (lowered to a window a provider's error names). Above
// window - reserve - buffer (20,000 and 13,000 tokens, scaled down for
// small windows) it compacts, trying in order: prune (old tool-result
// bodies become stubs that point at read_tool_output), summarize (the
// summary model writes notes with our own prompt; they replace the older
// turns, the latest round stays
// verbatim, a view never starts at tool results), trim (the oldest turns
// after the summary leave). A compaction is a turn of its own
// (TurnCompaction, holding a compact.Record); earlier turns never change.
// New rebuilds the view and the calibration from recorded turns, so a
// resumed session sends what the one it replaces would have sent.
// Session.Compact and RequestCompaction let a host ask for a compaction.
// With Context.MemoryFlush, a compaction that will summarize is preceded by
// a silent turn in which the model may write notes to MEMORY.md or answer
// NO_REPLY (memory.go); the notes travel in the compaction record.
//
// A context-length error the estimate did not foresee emits the context
// WARNING, compacts (always summarizing) and retries once, rather than
// closing the session with an ERROR: the conversation can go on.
//
// # Output limits
//
// Every request carries max_output_tokens: SessionConfig.MaxOutputTokens,
// else the operator's Config.DefaultMaxOutputTokens, else
// DefaultMaxOutputTokens, lowered to the model's maximum
// (pricing.MaxOutputTokens). For a model that table does not know (a
// local server's) nothing is sent unless configured, so a small context
// is not overrun by the limit alone. A text answer cut by the limit gets up to 3
// continuation requests. A tool call cut by it (the answer finished for
// length while the last call's arguments are not a whole JSON object) is
// asked for again once with the model's maximum, when that is larger; the
// recorded answer then carries both calls' usage, so the cut one is paid
// for, and WARNING says so. When the model allows no more, the cut call
// is not run: its result tells the model plainly that its output hit the
// limit and to split the work (a file in parts, smaller patches), never
// that its JSON is invalid. The assistant turn records why the model
// stopped (Turn.Finish), so a resumed session answers the same way. A window smaller than the
// system prompt and tools (*WindowError), or a request that no strategy
// brings under the window (*compact.TooLargeError), closes the session
// with sizes in the message. SessionConfig.Context.Disabled restores the
// spec's behaviour: warn only. A context-length error then emits WARNING
// (not ERROR), Submit returns the error with StopError, and the session
// returns to IDLE, usable with a shorter input or after Compact.
//
// # Progress watchdog
//
// Loop detection only warns; the watchdog (watchdog.go) stops a session
// that has stalled. A tool round makes progress when one of its calls is
// fresh: a call not made before in this input that did not fail, a call
// made before whose output is new, or a failure not seen before (digits
// are ignored when failures are compared, so durations and counts do not
// make a repeated failure new). A round that repeats what was done, writes
// what the files already hold, or gets the same failure again, for any
// arguments, makes none. After SessionConfig.NoProgressRounds such rounds
// in a row (default 8) the model is told once (a steering turn with source
// "watchdog", and WARNING); after half as many again the input stops with
// StopNoProgress ("no_progress"), TURN_LIMIT carrying it, and the session
// returns to IDLE. New calls that succeed are progress, so exploring is
// never cut short (the turn and round limits bound it). Waiting does not
// count: a round with a wait call neither adds to nor resets the streak,
// a parked round is not observed, and the count starts afresh with each
// input and each resumed session.
//
// # Structured results
//
// Config.ResultSchema (an llm.ResponseFormat) asks for a final answer that
// is one JSON object valid against a JSON Schema (result.go). The loop runs
// as usual, tools included; the system prompt gains a "Final answer format"
// section with the schema. Each answer without tool calls is validated
// (one surrounding Markdown code fence is tolerated); a valid one is
// Outcome.Structured, compacted, and the input completes (never
// AWAITING_INPUT: a question is not a valid answer). An invalid one goes
// back to the model as a steering turn with source "result_schema" that
// lists every violation ("at /path: what was expected"), up to
// Config.ResultRepairs times per input (default 2, counted in the history,
// so a resumed session counts the same); then the input stops with
// StopResultSchema and Outcome.Violations. Continue on a history that
// ends with a final answer validates it the same way (the run that
// recorded it may have ended before checking it). Subagents do not
// inherit the schema.
//
// The requests do not carry the schema as Request.ResponseFormat, on any
// wire format: Anthropic, Bedrock and older Gemini receive it as a forced
// tool call on every request, which changes how the model works with its
// tools; the adapters refuse a mismatching answer as an error, so its text
// could not be shown back to the model for repair; and OpenAI's strict
// mode accepts only a subset of JSON Schema. Validation in the loop works
// the same on every provider.
//
// # Errors
//
// Tool failures, unknown tools and bad arguments become error results the
// model sees; the session goes on. Transient model errors are retried in
// package llm; if they still fail, ERROR is emitted, Submit returns the
// error and the session returns to IDLE (Continue retries). Authentication,
// permission, quota and invalid-request errors, a context-length error that
// compaction and one retry did not cure, and a Recorder failure, emit ERROR
// and close the session. Turn and round limits
// emit TURN_LIMIT and return the session to IDLE with a nil error.
//
// Abort and Close shut down in this order: cancel
// the model stream, let the environment kill running commands (SIGTERM,
// SIGKILL 2 s later), flush, emit SESSION_END, close subagents, CLOSED.
// They block until done and are safe to call twice. A tool round that an
// abort interrupts is not recorded: its calls stay unanswered in the
// history, as after a crash, so a session resumed from it runs them again
// instead of showing the model an abort as a tool failure.
//
// # Durability and resume
//
// With a Recorder, every turn is appended before the loop goes on. Resume
// rebuilds a session from the recorded turns; Continue then finishes an
// input that was cut short: tool calls of the last assistant turn without a
// recorded result are executed again (tools run at least once), and the
// model is called again. Consecutive tool-result turns of one round are
// merged into one message.
//
// # Subagents and parking
//
// spawn_agent, send_input, wait and close_agent are registered on a
// session that may spawn: one whose children's depth is within
// SessionConfig.MaxSubagentDepth. A session that may not has none of them,
// and a profile implementing SubagentPrompter leaves them out of its
// system prompt too (a model is not offered what it may not use). The default Spawner runs children in-process (handles agent-1,
// agent-2, ... per parent, so a model can name a child it spawns and waits
// for in the same turn): a child has its
// own session and history, shares the parent's environment (spawn_agent's
// working_dir moves its working directory but is not a sandbox), uses the
// parent's profile and current model unless overridden, and has its own
// limits. spawn_agent's read_only narrows the child's permissions to mode
// plan (permission.ReadOnly): it reads and searches but its edits, writes
// and commands are refused.
//
// Park: a Spawner whose children run elsewhere (fleet jobs) returns
// ErrParked from Wait when the child is not done. The loop then records the
// results of the round's earlier calls, stops without a result for the wait
// call, emits PARKED and Submit/Continue return ErrParked with the session
// IDLE. The host persists nothing more (the Recorder already has every
// turn), drops the session and later calls Resume + Continue, which re-runs
// the wait: it now returns at once. Spawners key spawns by CallID so a
// re-run spawn_agent does not start a second child.
//
// # Permissions
//
// With Config.Permissions set, every tool call is checked before it runs
// (package permission: modes, ordered rules, protected paths, destructive
// shell commands), after the registry has validated it: the order is
// validate, then approve, then execute. A call to an unknown tool, or
// whose arguments are not JSON or fail the tool's schema, gets that error
// and is never put to the policy or a person. The policy sees the paths
// the tool itself reads from the arguments (tools.Tool.Paths; a patch
// that does not parse is the tool's error, also before any approval), or,
// for a tool that does not declare them (MCP tools), a call that may touch
// any path (package permission, "Unknown paths"). A denied call gets an error result naming the rule and
// saying why, so the model can change course; PERMISSION_DENIED is
// emitted and a permission turn records the denial (tool, rule, reason,
// argument summary). A call the policy asks about is announced with
// APPROVAL_REQUESTED and handed to Config.Approver: an answer is applied at
// once (and recorded), permission.ErrPending parks the session as a wait
// does, and the host later appends the answer (AnswerTurn) and resumes; the
// replayed round finds it and runs or denies the call. An answer with
// Remember applies to later calls of the same tool and rule. Without an
// Approver, asked calls are denied with a message saying no one can be
// asked. Subagents share the parent's checker and approver.
//
// # Concurrency
//
// The goroutine inside Submit or Continue owns the loop and is the only
// writer of history; s.mu guards the fields host methods touch. When the
// profile allows parallel calls, each run of consecutive read-only calls in
// a round runs concurrently, and each mutating call runs alone, after the
// calls before it and before the calls after it (a round of read,
// write, read runs {read, read}, {write}, {read}); results are recorded in
// call order.
package agent
