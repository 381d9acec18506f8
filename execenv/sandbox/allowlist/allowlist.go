// Package allowlist reads the host allowlists of task sandboxes ("host",
// "host:port", "*.domain") and answers whether a host is admitted, or an
// entry covered by another list. It is a leaf: the task spec's validation
// (fleet) and the egress proxy (execenv/sandbox/egress) both use it.
package allowlist

import (
	"fmt"
	"net"
	"strings"
)

// List is the set of hosts a sandbox may reach through the proxy.
// The zero value admits nothing.
type List struct {
	entries []entry
}

type entry struct {
	host     string // lower case, no trailing dot; without "*." for a wildcard
	wildcard bool   // "*.host": names strictly below host
	port     string // "" = any port
}

// Parse reads entries "host", "host:port" and "*.domain"
// (optionally with a port). A bad entry is an error naming it.
func Parse(hosts []string) (List, error) {
	var a List
	for i, h := range hosts {
		e, err := parseEntry(h)
		if err != nil {
			return List{}, fmt.Errorf("allow_hosts[%d] %q: %v", i, h, err)
		}
		a.entries = append(a.entries, e)
	}
	return a, nil
}

// Check reports the first entry of hosts Parse would refuse.
func Check(hosts []string) error {
	_, err := Parse(hosts)
	return err
}

func parseEntry(h string) (entry, error) {
	var e entry
	h = strings.ToLower(strings.TrimSpace(h))
	if host, port, err := net.SplitHostPort(h); err == nil {
		if port == "" || strings.Trim(port, "0123456789") != "" {
			return e, fmt.Errorf("the port must be a number")
		}
		h, e.port = host, port
	}
	if rest, ok := strings.CutPrefix(h, "*."); ok {
		h, e.wildcard = rest, true
	}
	h = strings.TrimSuffix(h, ".")
	if h == "" || strings.ContainsAny(h, "*/@ ") {
		return e, fmt.Errorf("want a host name, host:port or *.domain")
	}
	e.host = h
	return e, nil
}

// Admits reports whether hostport ("host:port") may be reached.
func (a List) Admits(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, e := range a.entries {
		if e.port != "" && e.port != port {
			continue
		}
		if e.wildcard && strings.HasSuffix(host, "."+e.host) || !e.wildcard && host == e.host {
			return true
		}
	}
	return false
}

// Len is the number of entries.
func (a List) Len() int { return len(a.entries) }

// Covers reports whether every host:port entry admits is also admitted
// by a (entry must parse): the test of an allowlist that may only narrow
// another. A wildcard is covered by an equal or wider wildcard, a name
// without a port by an entry without a port.
func (a List) Covers(entryText string) bool {
	e, err := parseEntry(entryText)
	if err != nil {
		return false
	}
	for _, b := range a.entries {
		if b.port != "" && b.port != e.port {
			continue
		}
		switch {
		case !b.wildcard && !e.wildcard && b.host == e.host,
			b.wildcard && strings.HasSuffix(e.host, "."+b.host),
			b.wildcard && e.wildcard && b.host == e.host:
			return true
		}
	}
	return false
}
