// Package tools defines agent tools (a JSON-Schema definition plus an
// executor), the Registry that holds them, and the execution pipeline:
// lookup, validate, execute through an execenv.Environment, truncate.
// Failures become error results the model can act on, never Go errors that
// stop the loop.
//
// # Pipeline
//
// Registry.Execute runs one model tool call:
//
//  1. lookup: an unknown name gives an error result listing the tools;
//  2. parse: arguments that are not a JSON object (or that the adapter
//     flagged with llm.ToolCall.ArgumentsError) give an error result quoting
//     the parser;
//  3. validate: arguments are checked against the tool's JSON Schema
//     (santhosh-tekuri/jsonschema, each distinct schema compiled once per
//     process); every violation is named by JSON path and expectation;
//  4. execute: the tool's Run; a returned error becomes "Tool error (name):
//     ..." and a panic is recovered into an error result (the stack goes to
//     Result.Full only);
//  5. truncate: characters first, then lines (markers, head/tail or tail,
//     counts of what was removed), never splitting a UTF-8 sequence. Limits
//     come from DefaultLimits(name), overridden by Tool.Limits, overridden by
//     ExecOptions.Limits[name].
//
// Result.Content is what the model sees; Result.Full keeps the whole output
// for events and storage. Registry.Validate runs steps 1 to 3 alone, with
// the same error text, for a caller that checks a call before it runs (the
// agent's permission gate: validate, then approve, then execute).
//
// # Paths
//
// A tool says which paths a call touches with Tool.Paths, read from the
// validated arguments: ArgPaths reads named path arguments (a path or a
// list), PatchPaths every path a v4a patch adds, updates, deletes or moves
// to (a patch that does not parse is the error apply_patch itself gives),
// NoPaths is for a tool that touches no file. The permission layer checks
// these paths against its rules and protected directories; a tool without
// Paths (the shell, decided by its command; MCP tools) is treated as
// touching any path. Every core tool but the shell declares its paths.
//
// # Core tools
//
// One file per tool, each with a typed params struct, a JSON Schema, a
// description in an embedded .md file, a constructor returning the ready
// Tool (ReadFile, ReadManyFiles, WriteFile, EditFile, ApplyPatch, Shell,
// Grep, Glob, ListDir, WebFetch) and its executor (RunReadFile, RunShell,
// ...). Provider-shaped variants reuse the executors: build a Tool with
// Typed, your own name, description and schema, and map your params onto
// the core ones. Core returns a registry of the defaults; web_fetch is off
// unless a WebFetchConfig enables it.
//
// All file and command access goes through the call's execenv.Environment,
// so every tool works the same locally and over SSH. Mutates is set on the
// tools that change files or run commands (write_file, edit_file,
// apply_patch, shell); the others may run concurrently.
//
// # Settings in descriptions
//
// A tool whose description or schema states a session setting (the
// shell's default and maximum timeout) is built with Settled: its
// Tool.Settle rebuilds it for a session's Settings, filling placeholders
// such as {default} and {max_ms} (Settings.FillTimeouts). A session calls
// Registry.Settle with its settings (and again when they change), so the
// model is offered the timeouts the session applies, not a fixed 600 s.
//
// # Read before write
//
// A session passes its Reads (NewReads) in ExecOptions.Reads. read_file
// and read_many_files record each file they read (size, modification time
// and, up to MaxHashBytes, a SHA-256 of the whole content, even when only
// some lines were shown); write_file, edit_file and apply_patch record what
// they wrote. Before changing an existing file they compare it with that
// record and refuse, changing nothing, when it differs (by content when
// hashed, else by size and time; a touch that keeps the content is no
// change): a command, another agent or a hook changed it, and the model
// is told to read it again (the error wraps ErrStale). Our decisions where
// the reference agent leaves room:
//
//   - new files are exempt: creating needs no read;
//   - overwriting a whole existing file (write_file, or a patch's Add File
//     over an existing one) needs a read first, since the model would
//     replace content it has not seen;
//   - editing or patching a file the session never read is allowed:
//     old_string or the patch's context lines must match what the file
//     contains now, which is the check a read would buy;
//   - the record is per session (a subagent has its own) and in memory: a
//     resumed session reads again before it overwrites.
//
// Without Reads (nil) nothing is checked, for callers that run the tools
// outside a session.
//
// # Concurrency
//
// Registry is safe for concurrent use, and so is Execute: tools hold no
// per-call state outside their arguments. Whether two mutating calls may
// overlap is the caller's decision (the agent runs them in order).
package tools
