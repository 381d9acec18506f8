package execenv

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// HostKeyError is a refused SSH host key: unknown to the known_hosts file,
// or different from the key on file (Changed). Its message says how to
// verify and record the key.
type HostKeyError struct {
	Host           string // host name as dialed
	Port           int
	KnownHostsFile string
	Changed        bool   // a different key is on file: possible attack or reinstalled host
	Line           int    // known_hosts line of the old key when Changed
	Offered        string // type and SHA256 fingerprint of the key the server offered
}

// Error explains what happened and what to do.
func (e *HostKeyError) Error() string {
	scan := "ssh-keyscan " + e.Host
	target := e.Host
	if e.Port != DefaultSSHPort {
		scan = "ssh-keyscan -p " + strconv.Itoa(e.Port) + " " + e.Host
		target = "[" + e.Host + "]:" + strconv.Itoa(e.Port)
	}
	if e.Changed {
		return fmt.Sprintf("execenv: the ssh host key of %s has CHANGED: %s line %d holds a different key than the offered %s. "+
			"This may be an attack (man in the middle) or a reinstalled host. If the change is expected, remove the old key "+
			"(ssh-keygen -R '%s' -f %s) and record the new one (%s >> %s)",
			target, e.KnownHostsFile, e.Line, e.Offered, target, e.KnownHostsFile, scan, e.KnownHostsFile)
	}
	return fmt.Sprintf("execenv: the ssh host key of %s (%s) is not in %s; verify it and record it: %s >> %s",
		target, e.Offered, e.KnownHostsFile, scan, e.KnownHostsFile)
}

// hostKeyCallback checks host keys against the known_hosts file, read at
// every connection so a fixed file takes effect on the next attempt.
func (c SSHConfig) hostKeyCallback() (ssh.HostKeyCallback, error) {
	if c.InsecureIgnoreHostKey {
		logger := c.Logger
		return func(host string, _ net.Addr, key ssh.PublicKey) error {
			logger.Warn("execenv: ssh host key NOT checked (InsecureIgnoreHostKey); use only in tests",
				slog.String("host", host), slog.String("key", ssh.FingerprintSHA256(key)))
			return nil
		}, nil
	}
	check, err := knownhosts.New(c.KnownHostsFile)
	if err != nil {
		return nil, fmt.Errorf("execenv: cannot read known_hosts file %s: %w; create it with the verified host key (ssh-keyscan -p %d %s >> %s)",
			c.KnownHostsFile, err, c.Port, c.Host, c.KnownHostsFile)
	}
	return func(host string, remote net.Addr, key ssh.PublicKey) error {
		err := check(host, remote, key)
		var ke *knownhosts.KeyError
		if !errors.As(err, &ke) {
			return err
		}
		he := &HostKeyError{Host: c.Host, Port: c.Port, KnownHostsFile: c.KnownHostsFile,
			Offered: key.Type() + " " + ssh.FingerprintSHA256(key)}
		if len(ke.Want) > 0 {
			he.Changed, he.Line = true, ke.Want[0].Line
		}
		return he
	}, nil
}
