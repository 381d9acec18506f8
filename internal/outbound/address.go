package outbound

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// special are the address ranges no outbound request may reach unless the
// operator names them: everything that is not a public unicast address of
// the internet. An IPv4-mapped IPv6 address is unmapped before it is
// looked up, so ::ffff:127.0.0.1 is loopback.
var special = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this-network (0.0.0.0/8)"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private (RFC 1918)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared carrier-grade NAT (100.64.0.0/10)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local (cloud metadata lives here)"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private (RFC 1918)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation (TEST-NET-1)"},
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private (RFC 1918)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking (198.18.0.0/15)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation (TEST-NET-2)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation (TEST-NET-3)"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved or broadcast"},
	{netip.MustParsePrefix("::/96"), "unspecified, loopback or IPv4-compatible (::/96)"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64 (64:ff9b::/96)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64 (64:ff9b:1::/48)"},
	{netip.MustParsePrefix("100::/64"), "discard-only (100::/64)"},
	{netip.MustParsePrefix("2001::/32"), "Teredo (2001::/32)"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation (2001:db8::/32)"},
	{netip.MustParsePrefix("2002::/16"), "6to4 (2002::/16)"},
	{netip.MustParsePrefix("fc00::/7"), "unique local (fc00::/7)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local (deprecated)"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// Special reports what kind of non-public address ip is ("loopback",
// "private (RFC 1918)", ...), or "" for a public unicast address. A zone
// is ignored and an IPv4-mapped IPv6 address is judged as its IPv4 form.
func Special(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap()
	if !ip.IsValid() {
		return "not an address"
	}
	for _, s := range special {
		if s.prefix.Contains(ip) {
			return s.what
		}
	}
	return ""
}

// CheckAddr refuses ip when it is not a public unicast address and no
// prefix of allowPrivate contains it. The error says which range it is in
// and how an operator admits it.
func CheckAddr(ip netip.Addr, allowPrivate []netip.Prefix) error {
	what := Special(ip)
	if what == "" {
		return nil
	}
	plain := ip.WithZone("").Unmap()
	for _, p := range allowPrivate {
		if p.Contains(plain) {
			return nil
		}
	}
	return &RefusedError{Addr: plain, Why: what}
}

// RefusedError is a connection the guard refused after resolution.
type RefusedError struct {
	Addr netip.Addr
	Why  string // the kind of address
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("outbound: refusing to connect to %s, a %s address; an operator who means it names the address in outbound_allow_private",
		e.Addr, e.Why)
}

// ParsePrefixes reads an allow-private list: addresses ("10.0.0.5",
// "fd00::7") and prefixes ("10.20.0.0/16"). field names the setting in
// errors ("outbound_allow_private"). Prefixes are masked; IPv4-mapped
// forms are unmapped.
func ParsePrefixes(field string, entries []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(entries))
	for i, e := range entries {
		e = strings.TrimSpace(e)
		var p netip.Prefix
		var err error
		if strings.Contains(e, "/") {
			p, err = netip.ParsePrefix(e)
		} else {
			var a netip.Addr
			a, err = netip.ParseAddr(e)
			if err == nil && a.Zone() != "" {
				err = errors.New("zone")
			}
			if err == nil {
				a = a.Unmap()
				p = netip.PrefixFrom(a, a.BitLen())
			}
		}
		if err != nil || p.Addr().Zone() != "" {
			return nil, fmt.Errorf("%s[%d] %q: want an IP address (10.0.0.5) or a CIDR prefix (10.20.0.0/16); host names are not accepted because their addresses can change", field, i, e)
		}
		if p.Addr().Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
