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
// credentials may live there.
//
// This is the first part of issue 16: the local environment does not use
// it yet. Available tells whether bwrap can run here.
package sandbox
