package execenv

import (
	"context"
	"io"
)

// ProcessStarter is implemented by environments that can start a
// long-lived process whose standard input and output the caller holds, such
// as an MCP server speaking JSON-RPC on stdio. Local implements it; callers
// type-assert an Environment and report that the environment cannot run
// such a process when it does not.
//
// A started process runs in the same place and under the same rules as a
// command of Exec (working directory, environment policy, and whatever
// confines Exec's commands), but without Exec's timeout: it lives until
// Close, the environment's Cleanup, or its own exit.
type ProcessStarter interface {
	StartProcess(ctx context.Context, req ProcessRequest) (Process, error)
}

// ProcessRequest is one process to start.
type ProcessRequest struct {
	// Command runs with bash -c, like ExecRequest.Command.
	Command string
	// Dir is the working directory; "" means WorkingDir.
	Dir string
	// Env is added to the environment the policy lets through.
	Env map[string]string
	// Stderr receives the process's standard error; nil discards it. It is
	// written from one goroutine and must not block for long.
	Stderr io.Writer
}

// Process is a started process: Read reads its standard output, Write
// writes its standard input. Close closes its standard input, waits
// KillGrace for it to exit, then terminates its process group (SIGTERM,
// then SIGKILL); it is safe to call more than once. Exited is closed when
// the process has exited.
type Process interface {
	io.ReadWriteCloser
	Exited() <-chan struct{}
}
