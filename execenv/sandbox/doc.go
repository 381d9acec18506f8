// Package sandbox confines a command with bubblewrap (bwrap): a Policy
// becomes the bwrap command line that runs it with its workspace
// read-write, the system read-only, a private /tmp and home, its own
// user, PID, IPC and UTS namespaces, /proc and /dev, no network unless the
// policy allows it, and only the environment the policy gives.
//
// What stays hidden is everything else of the host: other workspaces,
// /root and /home, /var and /run (the worker's sockets), and /etc but for
// the files programs need to run and resolve names (passwd, hosts,
// resolv.conf, certificates...), since a worker's configuration and
// credentials may live there. The worker's processes are not visible
// (own /proc), so neither is their environment.
//
// # Nothing to escalate with
//
// Inside, a command is uid and gid InnerID (1000) in a user namespace of
// its own, with every capability dropped (--cap-drop ALL), no way to make
// further user namespaces (--disable-userns, on bubblewrap 0.8.0 and
// later; an older bwrap runs without it, and the seccomp filter alone
// refuses unshare, setns and clone with namespace flags), and the seccomp
// filter of Seccomp (--seccomp): mounts and the new mount API, keyrings,
// bpf, perf_event_open, module and kexec loading, open_by_handle_at and
// name_to_handle_at, userfaultfd, unshare, setns, clone with CLONE_NEW*,
// swap, reboot, iopl/ioperm, acct, quotas, syslog and clock setting fail
// with EPERM; clone3 fails with ENOSYS (its flags are in memory, out of
// a filter's reach; libc then uses clone, whose flags are checked); a
// system call of another architecture (i386 on x86_64) fails with ENOSYS,
// so 32-bit programs do not run. ptrace is allowed: the sandbox is its
// own PID namespace, so a debugger or strace reaches only the task's own
// processes, which coding tasks debug.
//
// # Users
//
// Outside, the sandbox's uid is that of the bwrap that made it, or of
// the user namespace it joins. A worker that is not root and whose user
// has a subordinate uid range (/etc/subuid, SubordinateRange; with
// newuidmap, newgidmap and nsenter installed) runs each task tree as one
// uid of that range (IDs over it: the range's first is kept back), as
// subuid.go and subuid_linux.go say: per environment it makes a user
// namespace where InnerID is that uid (the gid InnerID the worker's own
// primary group, through newgidmap, which then denies setgroups) and the
// worker's uid is mapped as InnerID+1, for bubblewrap to bind the
// worker's directories; bwrap joins it (--userns) instead of making one.
// The choice of the worker's group, not a subordinate one, is what lets
// the worker keep working on what tasks make: bwrap starts under umask
// 002, so what a task makes is group-writable, and the worker's file
// tools, delivery and cleanup reach it by group. What the worker makes
// for the task (the workspace's root, the home and /tmp, what the file
// tools write) is given to the task's uid by a chown run through nsenter
// in a second namespace where the worker is root (an open file's
// /proc/self/fd name, so no link is followed), and when the environment
// ends a chmod g+rwX run as the task's uid makes what it locked away
// (a Go module cache, mode 0700 directories) removable. The home and
// /tmp stay in a directory only the worker may search: another task's
// uid cannot reach them, nor signal the task's processes. Nested user
// namespaces are refused by the namespace's user.max_user_namespaces
// of 0 and the seccomp filter (bwrap refuses --disable-userns with
// --userns). bwrap's --die-with-parent does not hold across the uid it
// takes there, so the worker kills the sandbox's first process (its
// PID namespace's init) through a pidfd when bwrap ends (innerKiller);
// a worker killed with SIGKILL leaves a running command's sandbox
// behind. Without a range or those tools a worker that is not root
// starts bwrap as itself, as before: its tasks share its uid, kept
// apart by their namespaces alone. A root worker never
// lets a sandbox map to root: it starts bwrap as a uid of its own per
// task tree (Settings.IDs and Tree; by default one uid per environment
// from DefaultUIDFirst-DefaultUIDLast), gid the same, no supplementary
// group, so that per-uid limits, file ownership and signals keep tasks
// apart. The workspace tree (Lchown, through an os.Root, never following
// a link; a file with other hard links is left to its owner), the home
// and /tmp belong to that uid, and so does what the file tools create.
//
// bwrap resolves what it binds by name, as the uid that started it. So a
// root worker that may make mount namespaces (CAP_SYS_ADMIN; Linux 5.2+)
// starts bwrap from a thread of its own in a private mount namespace
// where the workspace (as opened), the operator's read-only and writable
// paths and the egress forwarder are attached on portals, empty entries
// of the environment's own directory the uid can reach (portal_linux.go);
// the host's mounts are not changed. Without that privilege they are
// bound by name: every directory above them and $TMPDIR must then be
// searchable by the uid (mode 0755 or 0711), or NewLocal fails saying
// which, and the forwarder is hard-linked (or copied) into the
// environment's directory. A shared writable path (Settings.Writable) is
// attached through an idmapped mount where IDs.Shared, the range's first
// uid, is the task's: tasks of different uids write it, and on disk what
// they write is that unprivileged uid's, never root's.
//
// # Limits
//
// Settings.Limits bound each environment. Where the worker has a
// delegated cgroup v2 (/sys/fs/cgroup is cgroup2, and the worker's cgroup
// has the pids and memory controllers and lets it write), each environment
// gets a child cgroup with pids.max, memory.max (swap 0) and cpu.max, and
// bwrap starts in it (clone3 CLONE_INTO_CGROUP); the first such
// environment moves the worker's processes into a leaf child
// ("agentfleet-worker") so that its cgroup may hand controllers down.
// Elsewhere bwrap starts under util-linux's prlimit: RLIMIT_NPROC for
// Pids (per uid: a root worker's tree has its own uid, and with
// subordinate uids the count is the tree's in its user namespace, so
// the bound is the tree's; a worker that runs its tasks as itself adds
// the processes and threads its user runs when the command starts, so
// the bound is that many more and shared with the worker), RLIMIT_DATA
// for Memory (per process), and
// no CPUs bound. RLIMIT_CPU bounds each process's CPU time in both cases.
// A command that fails at a limit ends its stderr with
// LimitHit.Message; the cgroup's pids.events and memory.events say so
// for sure, while without a cgroup the messages of a failed fork or
// allocation and SIGXCPU are taken as the sign. The worker survives
// either way.
//
// # Wiring
//
// Every process a local task starts goes through execenv.Local's Exec,
// whose Wrap NewLocal sets so each command becomes its bwrap command line
// (the workspace, the seccomp filter as descriptors; the uid and cgroup as
// process attributes), with a private home and /tmp that last from one
// command to the next (host directories removed by Cleanup) and the
// egress proxy its Settings need. Checks, hooks and MCP servers that start
// processes must use the same environment's Exec or StartProcess to be
// confined the same way. A command whose sandbox cannot start fails with
// bwrap's message on its stderr; nothing is ever run unconfined.
//
// The workspace is bound as it was opened (LocalConfig.WorkingDirFile, or
// opened by NewLocal without following a link in its last component):
// bwrap's --bind-fd binds where that directory is now, not what its name
// leads to. Settings.ReadOnlyDirs are bound the same way, read-only
// (--ro-bind-fd, or a portal whose source is the descriptor): directories
// the caller opened beneath a root it trusts, such as the parent's .git of
// a subagent working in a git worktree (opened.go).
//
// Network: NetworkNone (the default) leaves the sandbox a loopback of its
// own; NetworkFull shares the worker's network; NetworkAllowlist keeps the
// network namespace closed and adds the egress proxy of
// execenv/sandbox/egress as the only way out.
//
// File operations (read_file, write_file...) run in the worker process,
// not in the sandbox: Scope keeps them inside the workspace and the
// read-only paths (execenv.Scoped's path check, then checks of what was
// really opened; see files.go). Grep runs ripgrep inside the sandbox
// (through the same Wrap) when rg is in a directory the sandbox sees.
// Without such an rg, grep, and glob always, walk the workspace from the
// worker; they skip symbolic links, but a command that swaps a directory
// for a link while such a walk runs could lead it outside (glob reveals
// names only): a gap left open.
//
// # Images
//
// Settings.Image puts a root file system (an OCI image internal/ociimage
// unpacked) in place of the host's system directories and /etc files,
// read-only; the rest is as above (image.go says how it is bound).
//
// Available tells whether bwrap can run here.
package sandbox
