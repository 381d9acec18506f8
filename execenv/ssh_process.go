package execenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"golang.org/x/crypto/ssh"
)

var _ ProcessStarter = (*SSH)(nil)

// StartProcess starts req.Command on the remote host (see ProcessStarter)
// through Exec's wrapper: the same environment policy, working directory
// and process group of its own, with the SSH session's standard input and
// output as the process's. Cleanup kills it like a running command; a lost
// connection ends it (its standard input closes).
func (s *SSH) StartProcess(ctx context.Context, req ProcessRequest) (Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("execenv: process not started: %w", err)
	}
	if err := s.ensureInit(ctx); err != nil {
		return nil, err
	}
	dir := s.resolve(req.Dir)
	if fi, err := s.Stat(ctx, dir); err != nil || !fi.IsDir {
		return nil, fmt.Errorf("execenv: working directory %q for the process is not a directory: %v", dir, err)
	}
	script, err := s.execScript(ExecRequest{Command: req.Command, Env: req.Env}, dir, "<&0")
	if err != nil {
		return nil, err
	}
	var p *sshProcess
	err = s.withConn(ctx, func(c *sshConn) error {
		var err error
		p, err = s.startProcess(c, script, req.Stderr)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("execenv: start remote process: %w", err)
	}
	return p, nil
}

// startProcess opens a session for script and wires its pipes.
func (s *SSH) startProcess(c *sshConn, script string, stderr io.Writer) (*sshProcess, error) {
	sess, err := c.client.NewSession()
	if err != nil {
		return nil, err
	}
	stdin, err1 := sess.StdinPipe()
	outPipe, err2 := sess.StdoutPipe()
	if err := errors.Join(err1, err2); err != nil {
		_ = sess.Close()
		return nil, err
	}
	if stderr == nil {
		stderr = io.Discard
	}
	sess.Stderr = stderr
	if err := sess.Start(script); err != nil {
		_ = sess.Close()
		return nil, err
	}
	run := &sshRun{conn: c, sess: sess, started: time.Now(), pgid: make(chan int, 1), waited: make(chan error, 1)}
	pr, pw := io.Pipe()
	p := &sshProcess{s: s, run: run, stdin: stdin, stdout: pr, exited: make(chan struct{})}
	s.track(run, true)
	go func() {
		run.readStdout(pw, outPipe)
		_ = pw.Close()
	}()
	go func() {
		_ = sess.Wait()
		s.track(run, false)
		close(p.exited)
	}()
	return p, nil
}

// sshProcess is one process of StartProcess.
type sshProcess struct {
	s      *SSH
	run    *sshRun
	stdin  io.WriteCloser
	stdout *io.PipeReader // what follows the wrapper's process group line
	exited chan struct{}

	closeOnce sync.Once
}

func (p *sshProcess) Read(b []byte) (int, error)  { return p.stdout.Read(b) }
func (p *sshProcess) Write(b []byte) (int, error) { return p.stdin.Write(b) }
func (p *sshProcess) Exited() <-chan struct{}     { return p.exited }

// Close closes the process's standard input, waits KillGrace for it to
// exit, then sends its process group SIGTERM and, KillGrace later, SIGKILL.
func (p *sshProcess) Close() error {
	p.closeOnce.Do(func() {
		_ = p.stdin.Close()
		for _, sig := range []string{"TERM", "KILL"} {
			if p.waitExit(KillGrace) {
				break
			}
			p.signal(sig)
		}
		p.waitExit(KillGrace)
		_ = p.run.sess.Close()
		_ = p.stdout.Close()
	})
	return nil
}

// waitExit reports whether the process exited within d.
func (p *sshProcess) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// signal sends sig to the process group once the wrapper reported it.
func (p *sshProcess) signal(sig string) {
	if pg := p.run.pgKnown.Load(); pg > 0 && !p.run.conn.dead() {
		p.s.signalGroup(context.Background(), p.run.conn, int(pg), sig)
		return
	}
	_ = p.run.sess.Signal(ssh.Signal(sig))
}
