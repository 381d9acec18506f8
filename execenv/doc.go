// Package execenv abstracts where tools run: files and commands on the local
// machine (Local) or on a remote host over SSH (SSH), behind one Environment
// interface, with wrappers (ReadOnly, Logging, Scoped) for cross-cutting
// policy. A Description serializes an environment so that another worker can
// rebuild it (FromDescription). execenvtest.Exercise is the conformance
// suite every implementation passes; sshtest starts a real sshd for tests.
//
// # Concurrency and ownership
//
// Every Environment is safe for concurrent use. Local holds no connection;
// SSH holds one SSH connection (with its SFTP client) shared by all
// operations, dialed at Initialize or first use, kept alive with keepalive
// requests (SSHConfig.KeepAlive), and redialed when it breaks: an operation
// that fails on a broken connection is retried once on a new one. Cleanup
// closes the connection and waits for the goroutines the environment
// started; it is safe to call more than once. The package runs on Linux.
//
// # Working directory
//
// Relative paths, commands and searches start in the working directory.
// Initialize creates it, except for a Local with CreateOnFirstUse, which
// behaves from the start as if it existed and were empty but creates it
// only when something needs it (a fleet task that never touches its fresh
// workspace then costs no mkdir and no removal): reads of paths in it
// (ReadFile, OpenFile, Stat, Exists) find nothing and create nothing,
// while Exec, WriteFile, List, Glob, Grep, Remove, Rename, and reads of the
// working directory itself create it first. Creation happens once per
// environment, whichever operation comes first (concurrent ones wait for
// it); a failed creation fails that operation and is tried again by the
// next one. A directory that already exists is used as it is. Commands
// and other processes see the directory only once something created it.
//
// # Commands
//
// Exec runs `bash -c COMMAND` in its own process group: locally with
// Setpgid, remotely under setsid inside a small wrapper script that reports
// the group id. The timeout (ExecRequest.Timeout, default 10 s, capped at
// 10 min, both configurable) and ctx cancellation send SIGTERM to the whole
// group, then SIGKILL after KillGrace (2 s). When the shell exits, whatever
// is left of its group (background jobs) is killed, so no process of the
// command outlives Exec unless it left the group itself (setsid, daemons).
// A timed-out result has TimedOut set and its Stderr ends with
// TimeoutMessage; a cancelled one has Canceled set.
// ExitCode is -1 when a signal ended the command (over SSH: a signal we
// sent; other signal deaths report 128+n as the remote shell sees them).
//
// Local commands run on Linux and macOS: the shell's exit is watched
// without reaping it (waitid WNOWAIT on Linux, a kqueue NOTE_EXIT event on
// macOS), so its group id cannot be reused before the leftovers are killed.
// On Windows, which has neither bash nor process groups, Local.Exec
// answers ErrNoLocalCommands (its file operations work); the dispatcher,
// the CLI and SSH environments work there. `make cross` builds both
// commands for macOS and Windows in CI.
//
// Output is streamed to ExecRequest.OnOutput (one call at a time, chunks
// the callback may keep) and retained up to MaxOutputBytes per stream (16
// MiB by default): the first and last halves are kept, with a marker line
// naming the number of bytes dropped between them and OmittedBytes counting
// them. Returned output is valid UTF-8 (invalid bytes become U+FFFD).
//
// The environment a command sees follows the EnvPolicy: EnvInheritAll (the
// default) passes the base environment minus names ending in _API_KEY,
// _SECRET, _TOKEN, _PASSWORD or _CREDENTIAL (any case) unless KeepSecrets;
// EnvCoreOnly keeps PATH, HOME, USER, SHELL, LANG, LC_*, TERM, TMPDIR and
// toolchain locations (IsCoreEnvName), but no value holding a URL with a
// password; EnvNone keeps nothing. The base is
// the worker's own environment for Local and the remote login environment
// for SSH (local variables are never forwarded). ExecRequest.Env is added
// on top, whatever the names.
//
// # Search
//
// Grep and Glob select files the same way: hidden files are included,
// entries named .git are skipped, .gitignore files are honoured in every
// directory and in the ancestors of the search root (with or without a git
// repository), symlinks are not followed. Grep runs ripgrep when it is
// installed (locally on PATH, or on the remote host) and a pure-Go search
// otherwise (over SFTP for SSH); both produce identical results, checked by
// tests on fixtures and on the Go source tree. Patterns are RE2 and are
// validated with Go's regexp first, so a bad pattern gets the same error
// everywhere. Grep's Glob filter follows ripgrep's --glob: a pattern without
// '/' matches the file name, "!pat" excludes, and a matching glob includes
// a file even if .gitignore names it (ignored directories stay pruned).
// Files with a NUL byte in their first 64 KiB are skipped as binary. Rows
// are sorted by path then line and cut at MaxResults (default 100) with
// Truncated set; memory stays bounded by MaxResults, whatever the tree.
//
// Glob patterns match paths relative to the base directory: '*' and '?'
// stay within a segment, "**" spans directories, so "*.go" means the top
// level and "**/*.go" any depth. Results are newest first (then by path),
// at most Limit (default 1000) kept in a bounded heap, with Total counting
// every match. Over SSH the tree is listed over SFTP, one round trip per
// directory.
//
// # Wrappers
//
// ReadOnly refuses WriteFile, Remove and Rename with ErrReadOnly; commands
// still run. Logging logs commands and file changes with slog. Scoped
// refuses paths (files, command directories, search roots) that resolve,
// after "..", symlinks and dangling symlinks, outside the allowed roots,
// with ErrOutsideScope naming the path; it does not confine what a command
// does.
//
// # Descriptions
//
// Describe returns kind, host, port, user, working directory and a key
// reference (SSHConfig.KeyRef), never key material. FromDescription
// rebuilds the environment; a Resolver supplied by the worker's
// configuration turns the key reference into a key file or key bytes and a
// known_hosts file. SSH host keys are always checked against known_hosts
// unless InsecureIgnoreHostKey is set (tests only; it logs a warning):
// unknown and changed keys fail with a HostKeyError that says how to verify
// and record the key.
package execenv
