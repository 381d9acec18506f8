package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// benchStopTimeout is how long a worker process may take to drain and exit
// after SIGTERM before it is killed. The bench stops the workers once every
// task has finished, so the drain has nothing to wait for.
const benchStopTimeout = time.Minute

// benchProcess is one worker process of `agentfleet-dev bench
// --worker-processes`. watch owns the wait: it sets waitErr and closes
// exited; everything else reads the process's state after exited.
type benchProcess struct {
	index  int
	cmd    *exec.Cmd
	stdout bytes.Buffer // written by exec until Wait returns
	stderr tailWriter
	exited chan struct{}

	stopping atomic.Bool // set before SIGTERM: an exit is then expected
	stopOnce sync.Once
	result   benchWorkerResult
	rssMB    float64
	err      error
}

// startBenchProcess starts command (a program and its leading arguments)
// with a's flags. An exit before stop is sent to died, which must have room.
func startBenchProcess(command []string, a benchWorkerArgs, died chan<- error) (*benchProcess, error) {
	p := &benchProcess{index: a.Index, exited: make(chan struct{}), stderr: tailWriter{max: 8 << 10}}
	p.cmd = exec.Command(command[0], append(slices.Clone(command[1:]), a.args()...)...)
	p.cmd.Env = append(os.Environ(), benchDatabaseEnv+"="+a.DatabaseURL)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	setParentDeathSignal(p.cmd)
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("bench: start worker process %d (%s): %w", a.Index, command[0], err)
	}
	go p.watch(died)
	return p, nil
}

func (p *benchProcess) watch(died chan<- error) {
	_ = p.cmd.Wait() // the exit status is in ProcessState
	close(p.exited)
	if !p.stopping.Load() {
		died <- p.failure("exited during the run")
	}
}

// stop sends SIGTERM, waits for the exit and returns the process's peak RSS
// and store writes. Safe to call twice: the second call returns the first's
// result.
func (p *benchProcess) stop() (benchWorkerResult, float64, error) {
	p.stopOnce.Do(func() { p.err = p.terminate() })
	return p.result, p.rssMB, p.err
}

func (p *benchProcess) terminate() error {
	p.stopping.Store(true)
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		t := time.NewTimer(benchStopTimeout)
		defer t.Stop()
		select {
		case <-p.exited:
		case <-t.C:
			_ = p.cmd.Process.Kill()
			<-p.exited
			return p.failure(fmt.Sprintf("did not exit within %s of SIGTERM and was killed", benchStopTimeout))
		}
	}
	if !p.cmd.ProcessState.Success() {
		return p.failure("failed")
	}
	p.rssMB = childPeakRSSMB(p.cmd.ProcessState)
	out := bytes.TrimSpace(p.stdout.Bytes())
	if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	if err := json.Unmarshal(out, &p.result); err != nil {
		return p.failure(fmt.Sprintf("printed no result line (%v)", err))
	}
	return nil
}

// failure describes how the process ended, with the end of its stderr.
func (p *benchProcess) failure(what string) error {
	return fmt.Errorf("bench: worker process %d (pid %d) %s: %s; the end of its stderr:\n%s",
		p.index, p.cmd.Process.Pid, what, p.cmd.ProcessState, p.stderr.String())
}

// tailWriter keeps the last max bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if len(w.b) > w.max {
		w.b = append(w.b[:0:0], w.b[len(w.b)-w.max:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.b)
}
