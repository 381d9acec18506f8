package execenv

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync"
)

// SSH runs commands and touches files on a remote host over one reused SSH
// connection (SFTP for files). It reconnects when the connection breaks.
type SSH struct {
	cfg SSHConfig

	mu      sync.Mutex // guards cur, closed and running
	cur     *sshConn
	closed  bool
	running map[*sshRun]struct{} // commands in flight, killed by Cleanup
	wg      sync.WaitGroup       // connection watchers and keepalives

	infoMu    sync.Mutex // guards the fields below, set by Initialize
	inited    bool
	workDir   string
	platform  string
	osVersion string
	hasRG     bool
}

var _ Environment = (*SSH)(nil)

// NewSSH returns an SSH environment; it connects at Initialize (or at the
// first operation).
func NewSSH(cfg SSHConfig) (*SSH, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &SSH{cfg: cfg, workDir: cfg.WorkingDir, running: map[*sshRun]struct{}{}}, nil
}

// Initialize connects, learns the remote platform and whether rg is
// installed, and creates the working directory (the remote home directory
// when none was configured).
func (s *SSH) Initialize(ctx context.Context) error {
	s.infoMu.Lock()
	defer s.infoMu.Unlock()
	return s.initLocked(ctx)
}

// ensureInit initializes on first use.
func (s *SSH) ensureInit(ctx context.Context) error {
	s.infoMu.Lock()
	defer s.infoMu.Unlock()
	if s.inited {
		return nil
	}
	return s.initLocked(ctx)
}

func (s *SSH) initLocked(ctx context.Context) error {
	return s.withConn(ctx, func(c *sshConn) error {
		out, err := runSimple(ctx, c, "uname -s; uname -sr; command -v rg >/dev/null 2>&1 && echo rg || echo none")
		if err != nil {
			return fmt.Errorf("execenv: probe remote host %s: %w", s.addr(), err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) < 3 {
			return fmt.Errorf("execenv: unexpected answer from remote host probe: %q", out)
		}
		s.platform, s.osVersion, s.hasRG = strings.ToLower(lines[0]), lines[1], lines[2] == "rg" && !s.cfg.NoRipgrep
		if s.workDir == "" {
			if s.workDir, err = c.sftp.Getwd(); err != nil {
				return fmt.Errorf("execenv: find the remote home directory: %w", err)
			}
		}
		if err := c.sftp.MkdirAll(s.workDir); err != nil {
			return fmt.Errorf("execenv: create remote working directory %s: %w", s.workDir, err)
		}
		s.inited = true
		return nil
	})
}

// Cleanup kills the process groups of commands still running and closes
// the connection; later calls do nothing.
func (s *SSH) Cleanup(ctx context.Context) error {
	s.killRunning(ctx)
	s.closeAll()
	return nil
}

// WorkingDir is the absolute remote working directory.
func (s *SSH) WorkingDir() string {
	s.infoMu.Lock()
	defer s.infoMu.Unlock()
	return s.workDir
}

// Platform is the remote `uname -s`, lower-cased (known after Initialize).
func (s *SSH) Platform() string {
	s.infoMu.Lock()
	defer s.infoMu.Unlock()
	return s.platform
}

// OSVersion is the remote `uname -sr` (known after Initialize).
func (s *SSH) OSVersion() string {
	s.infoMu.Lock()
	defer s.infoMu.Unlock()
	return s.osVersion
}

// Describe returns the host, user, directory and key reference; SSH
// environments are reachable from every worker, so Shared is true.
func (s *SSH) Describe() Description {
	return Description{
		Kind: KindSSH, WorkingDir: s.WorkingDir(), Host: s.cfg.Host, Port: s.cfg.Port,
		User: s.cfg.User, KeyRef: s.cfg.KeyRef, Shared: true,
	}
}

// UsesRipgrep reports whether grep runs rg on the remote host.
func (s *SSH) UsesRipgrep() bool {
	s.infoMu.Lock()
	defer s.infoMu.Unlock()
	return s.hasRG
}

// resolve makes a remote path absolute against the working directory.
func (s *SSH) resolve(p string) string {
	wd := s.WorkingDir()
	if p == "" {
		return wd
	}
	if !path.IsAbs(p) {
		p = path.Join(wd, p)
	}
	return path.Clean(p)
}

// runSimple runs a command in a new session and returns its stdout.
func runSimple(ctx context.Context, c *sshConn, command string) ([]byte, error) {
	sess, err := c.client.NewSession()
	if err != nil {
		return nil, err
	}
	defer func() { _ = sess.Close() }()
	stop := context.AfterFunc(ctx, func() { _ = sess.Close() })
	defer stop()
	var stderr strings.Builder
	sess.Stderr = &stderr
	out, err := sess.Output(command)
	if err != nil && ctx.Err() != nil {
		return out, ctx.Err()
	}
	if err != nil {
		return out, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// shQuote quotes s for a POSIX shell.
func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
