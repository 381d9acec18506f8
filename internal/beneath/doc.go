// Package beneath opens directories a task names without trusting the
// name: a path relative to a root is resolved component by component
// beneath that root, and a symbolic link in any component, a ".."
// component, an absolute path or a path that leaves the root is refused.
//
// It is the one place where a task-named directory becomes a trusted one:
// a workspace, a subagent's working_dir, a clone target, the working
// directory of a check or a hook. Callers keep the *os.File it returns
// and use what was opened (bubblewrap's --bind-fd, or the /proc/self/fd
// name of FD) rather than the name, which a task could swap for a link
// between the check and the use.
//
// The root itself is the operator's: it is opened as given, links
// included (a /data that links to a volume is fine), and only what lies
// beneath it is checked.
//
// On Linux 5.6 and later the resolution is one openat2 call with
// RESOLVE_BENEATH and RESOLVE_NO_SYMLINKS; elsewhere, and where openat2
// is refused (seccomp profiles of some container runtimes), it is a walk
// that opens each component with O_NOFOLLOW relative to the one before.
// Both refuse the same paths (beneath_test.go runs every case through
// both).
//
// Errors wrap ErrEscape for a path that is absolute, has a ".." component
// or leaves the root, and ErrSymlink for a symbolic link on the way; both
// say which path and what to do.
package beneath
