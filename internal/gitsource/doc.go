// Package gitsource decides whether a repository a task names may be
// cloned, and how: it parses the source (a URL, an scp-like SSH address
// or a local path), checks it against the operator's rules, refuses
// internal addresses, and gives the git arguments and environment of a
// clone that cannot reach anything else.
//
// # Sources
//
// Parse accepts https:// URLs, ssh:// URLs (git+ssh:// and ssh+git://
// too), scp-like SSH addresses (git@host:owner/repo.git), file:// URLs,
// absolute local paths, and http:// URLs (which Rules admit only where an
// entry names http://). It refuses git:// (no transport security), remote
// helper transports (ext::, fd:: and any
// "name::address", which run commands or reuse descriptors), relative
// paths (they would be relative to the worker's working directory),
// user information on an https URL (credentials live on the workers), a
// query or fragment, a host that is not a plain name or address, and a
// path with a ".." segment.
//
// # Rules
//
// Rules are the operator's (fleet.Policy's repositories section):
//
//   - Allow lists the remote repositories a spec may name, each
//     "host[:port][/path/prefix]", optionally with a scheme
//     ("https://gitea.internal/team"; plain http only with "http://").
//     Hosts compare exactly (lower case,
//     no trailing dot: "github.com" does not admit
//     "github.com.evil.net"); an entry without a port admits the scheme's
//     default port only (443, 22); the path prefix matches whole segments
//     ("github.com/acme" admits github.com/acme/app.git, not
//     github.com/acmeevil/x), a final ".git" ignored on both sides.
//     Empty Allow admits any https or ssh host: today's users keep working,
//     and the address check below still keeps clones off internal hosts.
//   - AllowLocal lists the local directories (absolute prefixes) whose
//     repositories may be cloned; empty (the default) admits no local path
//     and no file:// URL. A local source is checked as text at submission
//     and, on the worker, again after its symbolic links are resolved
//     (CheckLocal), so a link under an allowed directory that points
//     elsewhere is refused.
//   - AllowPrivate lists address prefixes (CIDR, or single addresses) of
//     internal hosts a clone may reach. Every other address that is not
//     public unicast (loopback, RFC 1918, fc00::/7, link-local with the
//     cloud metadata endpoint, 100.64.0.0/10, NAT64, 0.0.0.0/8, multicast,
//     reserved) is refused after the host's name is resolved
//     (CheckAddresses): a spec cannot make a worker send a request to an
//     internal service.
//
// # Clones
//
// CloneArgs turns off hard links and shared objects (--no-local), allows
// only the https and ssh transports (and file when the source is local,
// which Rules admitted), refuses HTTP redirects and recursion into
// submodules. CloneEnv is the environment a clone runs with: the
// worker's PATH, HOME (its git credentials), SSH_AUTH_SOCK, TLS and proxy
// settings and locale, and nothing else, so no provider key, database URL
// or token of the worker reaches git or anything git runs.
//
// The address check resolves the host before git does. Where the
// worker's sandbox is on, an http(s) or local clone runs inside a
// sandbox of the task's (fleet/worker's clone): SandboxCloneArgs clone
// into the sandbox's writable directory, a remote host is reached only
// through the sandbox's egress proxy, which admits the source's host:port
// (ProxyHost) alone and checks every address it dials against
// AllowPrivate (the same list as CheckAddresses, not the worker's
// outbound_allow_private), so a name that re-resolves to an internal
// address in between (DNS rebinding) is refused there; a local source is
// bound read-only with no network, named safe to git (SafeDirectories).
// Otherwise (sandbox off, and every ssh clone) git runs in the worker
// with CloneEnv: an http(s) clone is then pinned to the addresses checked
// (CloneArgs sets http.curloptResolve), while an ssh clone resolves the
// host again in ssh, and a proxy the worker's environment names
// (HTTPS_PROXY) resolves it itself: neither is pinned.
package gitsource
