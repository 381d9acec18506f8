package execenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// ErrNoLocalCommands is what Local.Exec answers on Windows: the local
// environment runs commands with bash in a process group, which Windows
// has neither of. Its file operations work; run commands through an SSH
// environment, or run the worker on Linux or macOS.
var ErrNoLocalCommands = errors.New("execenv: the local environment runs commands only on Linux and macOS; use an SSH environment, or run the worker on Linux or macOS")

// drainTimeout bounds how long Exec waits for output after the process
// group is gone: a process that left the group (setsid) may keep the pipes
// open, and its output is then cut off.
const drainTimeout = 2 * time.Second

// Exec runs req.Command with /bin/bash -c in a new process group. On
// timeout or cancellation the group receives SIGTERM, then SIGKILL after
// KillGrace; when the shell exits, whatever is left of its group is killed,
// so background processes do not outlive the command.
func (l *Local) Exec(ctx context.Context, req ExecRequest) (ExecResult, error) {
	if err := ctx.Err(); err != nil {
		return ExecResult{}, fmt.Errorf("execenv: command not started: %w", err)
	}
	if err := l.ensureDir(); err != nil {
		return ExecResult{}, err
	}
	timeout := effectiveTimeout(req.Timeout, l.cfg.DefaultTimeout, l.cfg.MaxTimeout)
	run, err := l.start(req)
	if err != nil {
		return ExecResult{}, err
	}
	defer l.forget(run.pgid)

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var res ExecResult
	select {
	case <-run.exited:
	case <-timer.C:
		res.TimedOut = true
	case <-ctx.Done():
		res.Canceled = true
	}
	if res.TimedOut || res.Canceled {
		terminateGroup(run.pgid, run.exited)
	}
	<-run.exited
	killGroup(run.pgid) // leftovers: background jobs of a finished shell
	waitErr := run.cmd.Wait()
	run.drain()

	res.ExitCode = exitCode(run.cmd.ProcessState, waitErr)
	res.Duration = time.Since(run.started)
	res.Stdout, res.Stderr = run.stdout.String(), run.stderr.String()
	res.OmittedBytes = run.stdout.omitted() + run.stderr.omitted()
	if res.TimedOut {
		res.Stderr = appendTimeoutMessage(res.Stderr, timeout)
	}
	return res, nil
}

// localRun is one started command and the goroutines reading its output.
type localRun struct {
	cmd            *exec.Cmd
	pgid           int
	started        time.Time
	stdout, stderr *headTail
	readers        sync.WaitGroup
	pipes          []*os.File    // read ends, closed by drain
	exited         chan struct{} // closed when the shell has exited (not yet reaped)
}

// start launches bash and the output readers.
func (l *Local) start(req ExecRequest) (*localRun, error) {
	dir := l.resolve(req.Dir)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("execenv: working directory %q for the command is not a directory: %v", dir, err)
	}
	w, err := l.command(dir, req)
	if err != nil {
		return nil, err
	}
	defer w.release()
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		_ = outR.Close()
		_ = outW.Close()
		return nil, err
	}
	cmd := w.exec(context.Background(), dir)
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := ownGroup(cmd); err != nil {
		_ = outR.Close()
		_ = outW.Close()
		_ = errR.Close()
		_ = errW.Close()
		return nil, err
	}
	w.setup(cmd)
	run := &localRun{
		cmd: cmd, stdout: newHeadTail(l.cfg.MaxOutputBytes), stderr: newHeadTail(l.cfg.MaxOutputBytes),
		pipes: []*os.File{outR, errR}, exited: make(chan struct{}),
	}
	run.started = time.Now()
	err = w.start(cmd)
	_ = outW.Close()
	_ = errW.Close()
	if err != nil {
		_ = outR.Close()
		_ = errR.Close()
		return nil, fmt.Errorf("execenv: start %s: %w", w.Argv[0], err)
	}
	run.pgid = cmd.Process.Pid
	l.remember(run.pgid)
	sink := &outputSink{onOutput: req.OnOutput}
	run.readers.Add(2)
	go run.copy(sink.stream(Stdout, run.stdout), outR)
	go run.copy(sink.stream(Stderr, run.stderr), errR)
	go func() {
		waitExited(run.pgid)
		close(run.exited)
	}()
	return run, nil
}

// command is the program of req: bash -c in the filtered environment,
// passed through Wrap when one is configured.
func (l *Local) command(dir string, req ExecRequest) (Wrapped, error) {
	argv := []string{"/bin/bash", "-c", req.Command}
	env := mergeEnv(FilterEnv(os.Environ(), l.cfg.EnvPolicy, l.cfg.KeepSecrets), req.Env)
	if l.cfg.Wrap == nil {
		return Wrapped{Argv: argv, Env: env}, nil
	}
	return l.cfg.Wrap(dir, argv, env)
}

// copy reads one pipe until EOF or until drain closes it.
func (r *localRun) copy(w io.Writer, p *os.File) {
	defer r.readers.Done()
	_, _ = io.Copy(w, p)
}

// drain waits for the readers, closing the pipes if they linger.
func (r *localRun) drain() {
	closePipes := func() {
		for _, p := range r.pipes {
			_ = p.Close()
		}
	}
	waitReaders(&r.readers, closePipes)
	closePipes()
}

// waitReaders waits for output readers at most drainTimeout, then calls
// abort (which must make them return) and waits again.
func waitReaders(readers *sync.WaitGroup, abort func()) {
	done := make(chan struct{})
	go func() { readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drainTimeout):
		abort()
		<-done
	}
}

// remember and forget track running groups for Cleanup.
func (l *Local) remember(pgid int) {
	l.mu.Lock()
	l.running[pgid] = struct{}{}
	l.mu.Unlock()
}

func (l *Local) forget(pgid int) {
	l.mu.Lock()
	delete(l.running, pgid)
	l.mu.Unlock()
}

// exitCode is the status, or -1 when a signal ended the process.
func exitCode(ps *os.ProcessState, waitErr error) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1
	}
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) {
		return -1
	}
	return ps.ExitCode()
}
