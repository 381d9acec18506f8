// Package egress is the one way out of a sandbox whose network is an
// allowlist: an HTTP proxy the worker runs for a task, admitting only the
// host names the task may reach.
//
// # Design
//
// The sandbox keeps its own network namespace (bubblewrap's
// --unshare-net): it has a loopback interface and nothing else, so no
// packet can leave it directly, whatever the command does. The worker
// serves the proxy on a unix socket in a private directory of its own,
// and bubblewrap binds that one socket file into the sandbox at
// InnerSocket. A unix socket is a file, not a network address, so binding
// it opens no route out of the namespace.
//
// Programs speak HTTP proxying over TCP, not over unix sockets, so the
// sandbox's first process is a forwarder: the worker's own executable,
// bound read-only at InnerForwarder and recognised by that name when it
// starts (see the init function of this package: any program that imports
// egress can act as the forwarder). It listens on ProxyAddr on the
// sandbox's loopback, relays every connection to InnerSocket, then runs
// the task's command as its child and exits with its status. The command
// finds the proxy through HTTP_PROXY, HTTPS_PROXY, http_proxy and
// https_proxy (ProxyEnv).
//
// The proxy (Proxy, from Listen) understands CONNECT host:port (HTTPS and
// any other TCP protocol a client tunnels) and plain HTTP requests with an
// absolute URI. It admits a request when the host matches the allowlist
// (allowlist.List of execenv/sandbox/allowlist): an entry "example.com"
// admits that host on any port, "example.com:443" that port only,
// "*.example.com" every name below example.com (not example.com itself).
// Names are matched as the client wrote them and resolved by the worker;
// an IP address is admitted only when the allowlist names it. Anything
// else is answered 403 with the reason, which the model sees in its tool
// output. The proxy connects through the outbound guard
// (internal/outbound): an admitted name that resolves to a loopback,
// private, link-local, CGNAT or NAT64 address is answered 502 unless the
// operator's outbound_allow_private names the address, so neither a name
// nor DNS rebinding leads a task to the worker's own services.
package egress
