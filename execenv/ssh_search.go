package execenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/agentfleet/agentfleet/execenv/internal/search"
)

// Grep runs rg on the remote host when it is installed there, with the
// arguments and parsing Local uses; otherwise it runs the pure-Go search
// over SFTP. A single file is always searched over SFTP. Either way the
// result equals Local's on the same tree.
func (s *SSH) Grep(ctx context.Context, req GrepRequest) (GrepResult, error) {
	p, err := search.PlanGrep(req)
	if err != nil {
		return GrepResult{}, err
	}
	root := s.resolve(req.Path)
	fi, err := s.Stat(ctx, root)
	if err != nil {
		return GrepResult{}, err
	}
	var res GrepResult
	err = s.withConn(ctx, func(c *sshConn) error {
		col := search.NewCollector(p)
		var err error
		switch {
		case !fi.IsDir:
			err = search.GrepFile(sftpWalkFS{c.sftp}, root, req.Path, p, col)
		case s.UsesRipgrep():
			err = remoteRipgrep(ctx, c, root, p, col)
		default:
			err = search.GrepTree(ctx, sftpWalkFS{c.sftp}, root, p, col)
		}
		res = col.Result()
		return err
	})
	if err != nil {
		return GrepResult{}, err
	}
	return res, nil
}

// remoteRipgrep runs rg in root on the remote host and parses its output.
func remoteRipgrep(ctx context.Context, c *sshConn, root string, p search.GrepPlan, col *search.Collector) error {
	sess, err := c.client.NewSession()
	if err != nil {
		return err
	}
	defer func() { _ = sess.Close() }()
	stop := context.AfterFunc(ctx, func() {
		_ = sess.Signal(ssh.SIGKILL)
		_ = sess.Close()
	})
	defer stop()
	var stderr bytes.Buffer
	sess.Stderr = &stderr
	out, err := sess.StdoutPipe()
	if err != nil {
		return err
	}
	quoted := make([]string, 0, 24)
	for _, a := range search.RipgrepArgs(p) {
		quoted = append(quoted, shQuote(a))
	}
	if err := sess.Start("cd -- " + shQuote(root) + " && exec rg " + strings.Join(quoted, " ")); err != nil {
		return err
	}
	parseErr := search.ParseRipgrep(out, col)
	waitErr := sess.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	if parseErr != nil {
		return parseErr
	}
	var ee *ssh.ExitError
	switch {
	case waitErr == nil:
		return nil
	case errors.As(waitErr, &ee):
		return ripgrepExitError(ee.ExitStatus(), waitErr, stderr.String())
	}
	return fmt.Errorf("execenv: remote rg: %w", waitErr)
}

// Glob matches remote files by pattern, newest first, walking the tree
// over SFTP with the same rules as Local (one round trip per directory).
func (s *SSH) Glob(ctx context.Context, req GlobRequest) (GlobResult, error) {
	if err := s.ensureInit(ctx); err != nil {
		return GlobResult{}, err
	}
	base := s.resolve(req.Path)
	p, err := search.PlanGlob(req, base)
	if err != nil {
		return GlobResult{}, err
	}
	fi, err := s.Stat(ctx, base)
	if err != nil {
		return GlobResult{}, err
	}
	if !fi.IsDir {
		return GlobResult{}, fmt.Errorf("execenv: glob path %q is not a directory", base)
	}
	var res GlobResult
	err = s.withConn(ctx, func(c *sshConn) error {
		var err error
		res, err = search.GlobTree(ctx, sftpWalkFS{c.sftp}, base, p)
		return err
	})
	return res, err
}
