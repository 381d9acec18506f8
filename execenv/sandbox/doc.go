// Package sandbox confines a command with bubblewrap (bwrap): a Policy
// becomes the bwrap command line that runs it with its workspace
// read-write, the system read-only, a private /tmp and home, its own PID,
// IPC and UTS namespaces, /proc and /dev, no network unless the policy
// allows it, and only the environment the policy gives.
//
// What stays hidden is everything else of the host: other workspaces,
// /root and /home, /var and /run (the worker's sockets), and /etc but for
// the files programs need to run and resolve names (passwd, hosts,
// resolv.conf, certificates...), since a worker's configuration and
// credentials may live there. The worker's processes are not visible
// (own /proc), so neither is their environment.
//
// # Wiring
//
// Every process a local task starts goes through execenv.Local's Exec;
// Confine sets that environment's Wrap so each command becomes its bwrap
// command line, and NewLocal builds such an environment, with a private
// home and /tmp that last from one command to the next (host directories
// removed by Cleanup) and the egress proxy its Settings need. Checks, hooks and MCP servers that start
// processes must use the same environment's Exec, or Confine, to be
// confined the same way. A command whose sandbox cannot start fails with
// bwrap's message on its stderr; nothing is ever run unconfined.
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
// Available tells whether bwrap can run here.
package sandbox
