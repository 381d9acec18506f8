package outbound

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// Allowlist is a parsed list of the URLs requests may go to. The zero
// value admits nothing; AnyURL admits every http and https URL. It is
// safe for concurrent use.
type Allowlist struct {
	entries []entry
	any     bool
}

// entry is one parsed allowlist entry.
type entry struct {
	scheme   string // "http", "https", or "" for either
	host     string // normalised (see normHost); without "*." for a wildcard
	wildcard bool   // "*.host": names strictly below host
	port     string // "" = the URL scheme's default port
	path     string // "" = any path; else a prefix matched on whole segments
}

// AnyURL admits every http and https URL without user info: for
// destinations the operator configured (webhooks, forges), where only the
// address guard applies.
func AnyURL() Allowlist { return Allowlist{any: true} }

// ParseAllowlist reads entries of the forms
//
//	https://hooks.example.com            that origin (port 443), any path
//	https://hooks.example.com:8443/hook  that origin, paths /hook and /hook/...
//	https://*.example.com                any name strictly below example.com
//	hooks.example.com, *.example.com     http (port 80) or https (port 443)
//	hooks.example.com:8080               http or https on port 8080
//
// Host names compare case-insensitively, after IDNA (a Unicode name
// equals its xn-- form) and without a trailing dot; an IP address
// compares as an address. field names the setting in errors
// ("hooks_http_allowlist"); a bad entry is an error naming it.
func ParseAllowlist(field string, entries []string) (Allowlist, error) {
	var a Allowlist
	var errs []error
	for i, raw := range entries {
		e, err := parseEntry(strings.TrimSpace(raw))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s[%d] %q: %v", field, i, raw, err))
			continue
		}
		a.entries = append(a.entries, e)
	}
	if err := errors.Join(errs...); err != nil {
		return Allowlist{}, err
	}
	return a, nil
}

const entryForms = "want scheme://host[:port][/path], host[:port] or *.domain"

func parseEntry(s string) (entry, error) {
	var e entry
	if s == "" {
		return e, errors.New("empty entry; " + entryForms)
	}
	rest := s
	if scheme, after, ok := strings.Cut(s, "://"); ok {
		e.scheme, rest = strings.ToLower(scheme), after
		if e.scheme != "http" && e.scheme != "https" {
			return e, fmt.Errorf("the scheme must be http or https, got %q", scheme)
		}
	}
	hostport, path, _ := strings.Cut(rest, "/")
	if strings.ContainsAny(hostport, "@?#") || strings.ContainsAny(path, "?#") {
		return e, errors.New("user info, a query or a fragment has no place in an allowlist entry; " + entryForms)
	}
	if p := strings.TrimSuffix("/"+path, "/"); p != "" {
		if dotSegment(p) {
			return e, errors.New("the path must not hold . or .. segments")
		}
		e.path = p
	}
	host := hostport
	if h, port, err := net.SplitHostPort(hostport); err == nil {
		if !validPort(port) {
			return e, fmt.Errorf("the port must be a number from 1 to 65535, got %q", port)
		}
		host, e.port = h, strings.TrimLeft(port, "0")
	} else if strings.HasPrefix(hostport, "[") && strings.HasSuffix(hostport, "]") {
		host = hostport[1 : len(hostport)-1]
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		host, e.wildcard = rest, true
	}
	if strings.HasPrefix(host, ".") {
		return e, fmt.Errorf("write a domain and the names below it as *%s", host)
	}
	h, err := normHost(host)
	if err != nil {
		return e, err
	}
	if _, err := netip.ParseAddr(h); err == nil && e.wildcard {
		return e, errors.New("a wildcard needs a domain name, not an address")
	}
	e.host = h
	return e, nil
}

// validPort reports whether p is a port number 1..65535.
func validPort(p string) bool {
	if p == "" || len(p) > 5 || strings.Trim(p, "0123456789") != "" {
		return false
	}
	n := 0
	for _, c := range p {
		n = n*10 + int(c-'0')
	}
	return n >= 1 && n <= 65535
}

// normHost returns host in the form hosts are compared in: an IP address
// in its canonical text (IPv4-mapped unmapped), a name in lower-case
// ASCII (IDNA) without a trailing dot.
func normHost(host string) (string, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return "", errors.New("an address with a zone cannot be allowed")
		}
		return a.Unmap().String(), nil
	}
	h := strings.TrimSuffix(host, ".")
	if h == "" || strings.ContainsAny(h, "*/\\@ %[]:") {
		return "", fmt.Errorf("%q is not a host name", host)
	}
	if !isASCII(h) {
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return "", fmt.Errorf("%q is not a valid international domain name: %v", host, err)
		}
		h = a
	}
	return strings.ToLower(h), nil
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// dotSegment reports whether path holds a "." or ".." segment.
func dotSegment(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// Len is the number of entries (0 for AnyURL).
func (a Allowlist) Len() int { return len(a.entries) }

// Check returns nil when u may be requested, else an error saying why
// not: a scheme other than http or https, user info, or no entry
// matching its scheme, host, port and path.
func (a Allowlist) Check(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("outbound: %s: only http and https URLs may be requested", redacted(u))
	}
	if u.User != nil {
		return fmt.Errorf("outbound: %s: a URL with user info (user@host) is refused; put credentials in headers", redacted(u))
	}
	host, err := normHost(u.Hostname())
	if err != nil {
		return fmt.Errorf("outbound: %s: %v", redacted(u), err)
	}
	if a.any {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	port = strings.TrimLeft(port, "0")
	for _, e := range a.entries {
		if e.matches(u.Scheme, host, port, u) {
			return nil
		}
	}
	return fmt.Errorf("outbound: %s is not on the allowlist", redacted(u))
}

// Admits reports whether the URL raw may be requested.
func (a Allowlist) Admits(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && a.Check(u) == nil
}

func (e entry) matches(scheme, host, port string, u *url.URL) bool {
	if e.scheme != "" && e.scheme != scheme {
		return false
	}
	want := e.port
	if want == "" {
		want = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	if want != port {
		return false
	}
	if e.wildcard && !strings.HasSuffix(host, "."+e.host) || !e.wildcard && host != e.host {
		return false
	}
	if e.path == "" {
		return true
	}
	p := u.Path
	if dotSegment(p) || strings.Contains(strings.ToLower(u.RawPath), "%2f") || strings.Contains(p, "\\") {
		return false
	}
	return p == e.path || strings.HasPrefix(p, e.path+"/")
}

// redacted is u without user info or query, for messages.
func redacted(u *url.URL) string {
	c := *u
	c.User, c.RawQuery, c.Fragment = nil, "", ""
	return c.String()
}
