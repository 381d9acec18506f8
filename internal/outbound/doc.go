// Package outbound is the one guard every outbound HTTP request and
// connection of agentfleet goes through: http hooks (agent/hooks), HTTP
// MCP servers (tools/mcp), web_fetch (tools), webhooks
// (fleet/dispatcher/webhook), forge API clients (fleet/delivery/forge)
// and the sandbox's egress proxy (execenv/sandbox/egress). It imports
// nothing of the module, so any package may use it.
//
// # Allowlists
//
// An Allowlist is parsed once (ParseAllowlist) into entries of scheme,
// host and port, and a URL is admitted only when its parsed scheme, host
// and port match an entry: never by comparing text, so
// "https://hooks.example.com@169.254.169.254/" (user info) and
// "https://hooks.example.com.evil.net" (another host) are refused. A URL
// with user info is always refused. Host names compare in lower-case
// ASCII after IDNA mapping and without a trailing dot; an entry without a
// port admits only its scheme's default port (80, 443), an entry without
// a scheme admits http and https; "*.example.com" admits the names below
// example.com, not example.com itself. An entry may end in a path
// ("https://h/hooks"): the URL's path must then be that path or below it,
// on whole segments, without "." or ".." segments or an encoded slash.
//
// # Addresses
//
// A Dialer refuses, after name resolution, every address that is not
// public unicast: loopback, RFC 1918 and fc00::/7, link-local (the cloud
// metadata endpoint 169.254.169.254 among them), 100.64.0.0/10, NAT64
// (64:ff9b::/96, 64:ff9b:1::/48), 0.0.0.0/8 and ::, multicast,
// broadcast and reserved ranges, documentation and benchmarking ranges,
// 6to4 and Teredo, and the IPv4-mapped IPv6 form of each (see Special).
// The check runs in the dialer's Control hook on the address being
// connected to, so a name that resolves, or re-resolves between a check
// and the connection (DNS rebinding), to an internal address is refused.
// An operator admits internal hosts by naming their addresses or prefixes
// (ParsePrefixes; the worker's and the dispatcher's
// outbound_allow_private). Names are not accepted there: what a name
// resolves to can change. A task's spec has no way to widen that list.
//
// # Redirects and secret headers
//
// Client follows at most MaxRedirects hops (default 5) and checks every
// hop against the allowlist, in CheckRedirect and again in the transport.
// A hop to another origin (scheme, host or port differ from the first
// request's) keeps the exchange but drops every secret header:
// Authorization, Proxy-Authorization, Cookie, Private-Token, the names in
// Policy.SecretHeaders and those of Policy.Headers; once a hop left the
// origin, later hops carry no secrets even if they come back. Dropping
// rather than refusing keeps public redirects (a moved page) working for
// web_fetch while no secret leaves its origin. Policy.Headers, the
// caller's own secrets, are added by the transport to the first request
// of an exchange only and by CheckRedirect to hops that stay on its
// origin: a redirect never re-adds them elsewhere.
//
// The transport ignores HTTP_PROXY and HTTPS_PROXY: a proxy resolves
// names itself, where the guard could not see the address.
package outbound
