package chaos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/agentfleet/agentfleet/internal/tiedproc"
)

// proc is one child process of the run (a NATS node, the model, the
// dispatcher, a worker), started again with the same command after it was
// killed. Its output goes to a log file in the run's directory. If the run
// dies, its children get SIGKILL (parent-death signal).
type proc struct {
	name string
	path string
	args []string
	env  []string
	log  string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done <-chan struct{} // closed when cmd exits
}

// start runs the command; it fails if the process is already running.
func (p *proc) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("chaos: %s is already running", p.name)
	}
	logFile, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.path, p.args...)
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	done, err := tiedproc.Start(cmd, syscall.SIGKILL, logFile)
	if err != nil {
		_ = logFile.Close()
		return fmt.Errorf("chaos: start %s: %w", p.name, err)
	}
	p.cmd, p.done = cmd, done
	return nil
}

// running reports whether the process was started and has not exited.
func (p *proc) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		p.cmd = nil
		return false
	default:
		return true
	}
}

// stop sends sig and waits up to patience for the exit, then kills.
func (p *proc) stop(sig syscall.Signal, patience time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return nil
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("chaos: signal %s: %w", p.name, err)
	}
	select {
	case <-p.done:
	case <-time.After(patience):
		_ = p.cmd.Process.Kill()
		<-p.done
		p.cmd = nil
		return fmt.Errorf("chaos: %s did not exit within %s of %s and was killed", p.name, patience, sig)
	}
	p.cmd = nil
	return nil
}

// kill is SIGKILL: the process gets no chance to clean up.
func (p *proc) kill() { _ = p.stop(syscall.SIGKILL, time.Minute) }
