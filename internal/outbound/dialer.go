package outbound

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// DefaultDialTimeout bounds one connection attempt of a Dialer.
const DefaultDialTimeout = 15 * time.Second

// Dialer connects to TCP addresses, refusing every address that is not
// public unicast (see Special) unless its allow-private list contains it.
// The check runs on the address actually dialled, after name resolution,
// so a name that resolves (or re-resolves, DNS rebinding) to an internal
// address is refused too. It is safe for concurrent use.
type Dialer struct {
	allowPrivate []netip.Prefix
	d            net.Dialer
}

// NewDialer returns a Dialer that admits the special addresses in
// allowPrivate (nil admits none). timeout 0 means DefaultDialTimeout.
func NewDialer(allowPrivate []netip.Prefix, timeout time.Duration) *Dialer {
	if timeout == 0 {
		timeout = DefaultDialTimeout
	}
	d := &Dialer{allowPrivate: allowPrivate}
	d.d = net.Dialer{Timeout: timeout, Control: d.control}
	return d
}

// DialContext connects to address on network ("tcp", "tcp4", "tcp6");
// other networks are refused. A refused address is a *RefusedError.
func (d *Dialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
	default:
		return nil, fmt.Errorf("outbound: network %q is not allowed, only tcp", network)
	}
	return d.d.DialContext(ctx, network, address)
}

// control runs for each resolved address just before connect.
func (d *Dialer) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("outbound: cannot read the dialled address %q: %v", address, err)
	}
	return CheckAddr(ap.Addr(), d.allowPrivate)
}
