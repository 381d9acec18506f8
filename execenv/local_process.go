package execenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

var _ ProcessStarter = (*Local)(nil)

// StartProcess starts req.Command with /bin/bash -c in a new process group
// (see ProcessStarter). Cleanup kills the group like a running command's.
func (l *Local) StartProcess(ctx context.Context, req ProcessRequest) (Process, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("execenv: process not started: %w", err)
	}
	if err := l.ensureDir(); err != nil {
		return nil, err
	}
	dir := l.resolve(req.Dir)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("execenv: working directory %q for the process is not a directory: %v", dir, err)
	}
	cmd, w, err := l.processCommand(req, dir)
	if err != nil {
		return nil, err
	}
	defer w.release()
	if err := ownGroup(cmd); err != nil {
		return nil, err
	}
	w.setup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := w.start(cmd); err != nil {
		return nil, fmt.Errorf("execenv: start %s: %w", cmd.Path, err)
	}
	p := &localProcess{l: l, cmd: cmd, pgid: cmd.Process.Pid, stdin: stdin, stdout: stdout, exited: make(chan struct{})}
	l.remember(p.pgid)
	go func() {
		waitExited(p.pgid)
		close(p.exited)
	}()
	return p, nil
}

// processCommand is the command a process runs: the same shell, directory
// and environment as Exec's commands. The caller sets it up and releases
// the Wrapped.
func (l *Local) processCommand(req ProcessRequest, dir string) (*exec.Cmd, Wrapped, error) {
	w, err := l.command(dir, ExecRequest{Command: req.Command, Env: req.Env}) // through Wrap, as Exec's
	if err != nil {
		return nil, w, err
	}
	cmd := w.exec(context.Background(), dir)
	cmd.Stderr = req.Stderr
	if cmd.Stderr == nil {
		cmd.Stderr = io.Discard
	}
	return cmd, w, nil
}

// localProcess is one process of StartProcess.
type localProcess struct {
	l      *Local
	cmd    *exec.Cmd
	pgid   int
	stdin  io.WriteCloser
	stdout io.ReadCloser
	exited chan struct{}

	closeOnce sync.Once
	closeErr  error
}

func (p *localProcess) Read(b []byte) (int, error)  { return p.stdout.Read(b) }
func (p *localProcess) Write(b []byte) (int, error) { return p.stdin.Write(b) }
func (p *localProcess) Exited() <-chan struct{}     { return p.exited }

// Close ends the process as Process says and reaps it.
func (p *localProcess) Close() error {
	p.closeOnce.Do(func() {
		_ = p.stdin.Close()
		grace := time.NewTimer(KillGrace)
		select {
		case <-p.exited:
		case <-grace.C:
			terminateGroup(p.pgid, p.exited)
		}
		grace.Stop()
		<-p.exited
		killGroup(p.pgid)
		p.l.forget(p.pgid)
		err := p.cmd.Wait()
		if _, ok := errors.AsType[*exec.ExitError](err); !ok {
			p.closeErr = err
		}
	})
	return p.closeErr
}
