package execenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// ErrClosed is returned by an SSH environment used after Cleanup.
var ErrClosed = errors.New("execenv: the environment was cleaned up")

// sshConn is one SSH connection with its SFTP client. done is closed when
// the connection is gone (the watcher goroutine owns closing it).
type sshConn struct {
	client *ssh.Client
	sftp   *sftp.Client
	done   chan struct{}
}

// dead reports whether the connection has ended.
func (c *sshConn) dead() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// close ends the connection.
func (c *sshConn) close() {
	_ = c.sftp.Close()
	_ = c.client.Close()
}

// conn returns the live connection, dialing a new one if there is none.
func (s *SSH) conn(ctx context.Context) (*sshConn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if s.cur != nil && !s.cur.dead() {
		return s.cur, nil
	}
	if s.cur != nil {
		s.cur.close()
		s.cfg.Logger.Warn("execenv: ssh connection lost, reconnecting", "host", s.addr())
	}
	c, err := s.dial(ctx)
	if err != nil {
		return nil, err
	}
	s.cur = c
	s.watch(c)
	return c, nil
}

// invalidate drops c if it is still the current connection.
func (s *SSH) invalidate(c *sshConn) {
	s.mu.Lock()
	if s.cur == c {
		s.cur = nil
	}
	s.mu.Unlock()
	c.close()
}

// withConn runs fn on a live connection, reconnecting and retrying once
// when fn fails because the connection broke.
func (s *SSH) withConn(ctx context.Context, fn func(c *sshConn) error) error {
	for attempt := 0; ; attempt++ {
		c, err := s.conn(ctx)
		if err != nil {
			return err
		}
		err = fn(c)
		if err == nil || attempt > 0 || ctx.Err() != nil || !(isConnErr(err) || c.dead()) {
			return err
		}
		s.cfg.Logger.Warn("execenv: ssh operation failed on a broken connection, retrying", "host", s.addr(), "error", err)
		s.invalidate(c)
	}
}

// isConnErr reports errors that mean the connection is unusable.
func isConnErr(err error) bool {
	var opErr *net.OpError
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || errors.Is(err, sftp.ErrSSHFxConnectionLost) ||
		errors.Is(err, sftp.ErrSSHFxNoConnection) || errors.As(err, &opErr) ||
		strings.Contains(err.Error(), "use of closed network connection")
}

// addr is host:port.
func (s *SSH) addr() string { return net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port)) }

// dial connects, authenticates, checks the host key and opens SFTP.
func (s *SSH) dial(ctx context.Context) (*sshConn, error) {
	hostKeys, err := s.cfg.hostKeyCallback()
	if err != nil {
		return nil, err
	}
	auth, closeAgent, err := s.authMethods()
	if err != nil {
		return nil, err
	}
	defer closeAgent()
	dialCtx, cancel := context.WithTimeout(ctx, s.cfg.DialTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(dialCtx, "tcp", s.addr())
	if err != nil {
		return nil, fmt.Errorf("execenv: connect to ssh host %s: %w", s.addr(), err)
	}
	deadline, _ := dialCtx.Deadline()
	_ = nc.SetDeadline(deadline)
	stop := context.AfterFunc(dialCtx, func() { _ = nc.SetDeadline(time.Now()) })
	cc, chans, reqs, err := ssh.NewClientConn(nc, s.addr(), &ssh.ClientConfig{
		User: s.cfg.User, Auth: auth, HostKeyCallback: hostKeys, Timeout: s.cfg.DialTimeout,
	})
	stop()
	if err != nil {
		_ = nc.Close()
		if he, ok := errors.AsType[*HostKeyError](err); ok {
			return nil, he
		}
		return nil, fmt.Errorf("execenv: ssh handshake with %s as %q: %w", s.addr(), s.cfg.User, err)
	}
	_ = nc.SetDeadline(time.Time{})
	client := ssh.NewClient(cc, chans, reqs)
	sc, err := sftp.NewClient(client)
	if err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("execenv: start sftp on %s (is the sftp subsystem enabled in sshd_config?): %w", s.addr(), err)
	}
	return &sshConn{client: client, sftp: sc, done: make(chan struct{})}, nil
}

// authMethods loads the configured keys; the returned func closes the agent connection.
func (s *SSH) authMethods() ([]ssh.AuthMethod, func(), error) {
	var signers []ssh.Signer
	if s.cfg.KeyFile != "" {
		data, err := os.ReadFile(s.cfg.KeyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("execenv: read SSHConfig.KeyFile: %w", err)
		}
		sg, err := parseKey(data, s.cfg.KeyFile)
		if err != nil {
			return nil, nil, err
		}
		signers = append(signers, sg)
	}
	if len(s.cfg.Key) > 0 {
		sg, err := parseKey(s.cfg.Key, "SSHConfig.Key")
		if err != nil {
			return nil, nil, err
		}
		signers = append(signers, sg)
	}
	methods := []ssh.AuthMethod{}
	if len(signers) > 0 {
		methods = append(methods, ssh.PublicKeys(signers...))
	}
	closeAgent := func() {}
	if s.cfg.UseAgent {
		sock := os.Getenv("SSH_AUTH_SOCK")
		if sock == "" {
			return nil, nil, errors.New("execenv: SSHConfig.UseAgent is set but SSH_AUTH_SOCK is empty; start ssh-agent or configure a key file")
		}
		ac, err := net.Dial("unix", sock) //nolint:gosec,noctx // G704: the ssh-agent's local unix socket, answered at once
		if err != nil {
			return nil, nil, fmt.Errorf("execenv: connect to ssh agent at %s: %w", sock, err)
		}
		closeAgent = func() { _ = ac.Close() }
		methods = append(methods, ssh.PublicKeysCallback(agent.NewClient(ac).Signers))
	}
	return methods, closeAgent, nil
}

// parseKey parses an unencrypted private key.
func parseKey(data []byte, name string) (ssh.Signer, error) {
	sg, err := ssh.ParsePrivateKey(data)
	if _, ok := errors.AsType[*ssh.PassphraseMissingError](err); ok {
		return nil, fmt.Errorf("execenv: private key %s is encrypted; load it into ssh-agent and set UseAgent, or use an unencrypted key", name)
	}
	if err != nil {
		return nil, fmt.Errorf("execenv: parse private key %s: %w", name, err)
	}
	return sg, nil
}

// watch starts the goroutines that notice a dead connection and send
// keepalives. Both end with the connection; Cleanup waits for them.
func (s *SSH) watch(c *sshConn) {
	s.wg.Go(func() {
		_ = c.client.Wait()
		close(c.done)
	})
	if s.cfg.KeepAlive <= 0 {
		return
	}
	s.wg.Go(func() {
		t := time.NewTicker(s.cfg.KeepAlive)
		defer t.Stop()
		for {
			select {
			case <-c.done:
				return
			case <-t.C:
				if err := s.keepalive(c); err != nil {
					s.cfg.Logger.Warn("execenv: ssh keepalive failed, closing the connection", "host", s.addr(), "error", err)
					c.close()
					return
				}
			}
		}
	})
}

// keepalive sends one keepalive request and waits for the reply at most
// one keepalive interval.
func (s *SSH) keepalive(c *sshConn) error {
	reply := make(chan error, 1)
	s.wg.Go(func() {
		_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
		reply <- err
	})
	t := time.NewTimer(s.cfg.KeepAlive)
	defer t.Stop()
	select {
	case err := <-reply:
		return err
	case <-t.C:
		return fmt.Errorf("no keepalive reply within %v", s.cfg.KeepAlive)
	case <-c.done:
		return nil
	}
}

// closeAll ends the connection and waits for the watcher goroutines.
func (s *SSH) closeAll() {
	s.mu.Lock()
	s.closed = true
	c := s.cur
	s.cur = nil
	s.mu.Unlock()
	if c != nil {
		c.close()
	}
	s.wg.Wait()
}
