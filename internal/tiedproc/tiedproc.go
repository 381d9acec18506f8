// Package tiedproc starts child processes that die with this one: the
// command's parent-death signal is set, and it is started from a locked OS
// thread that lives as long as the child, because Linux sends that signal
// when the forking thread exits, not the process.
//
// Only Linux has a parent-death signal. Elsewhere (macOS, Windows: a
// contributor's machine running the tests) Start starts and waits for the
// child the same way but cannot tie it: a child outlives a parent that is
// killed rather than stopped, and Tied is false. Refusing to start instead
// would turn every test that needs a throwaway Postgres into a failure
// there, for the sake of a cleanup that only matters after a crash; the
// callers stop their children on every normal path.
package tiedproc

import (
	"io"
	"os/exec"
	"runtime"
	"syscall"
)

// Start starts cmd so that it gets sig if this process dies, and returns a
// channel closed once it has exited (after Wait). closer, if not nil, is
// closed then too (the child's log file, say).
func Start(cmd *exec.Cmd, sig syscall.Signal, closer io.Closer) (<-chan struct{}, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	setDeathSignal(cmd.SysProcAttr, sig)
	started, done := make(chan error, 1), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer close(done)
		if closer != nil {
			defer func() { _ = closer.Close() }()
		}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return done, nil
}
