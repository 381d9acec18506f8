package agent

import (
	"errors"
	"fmt"
)

// Sentinel errors callers branch on.
var (
	// ErrClosed: the session is closed; create or resume another one.
	ErrClosed = errors.New("agent: session is closed; create a new session or resume this one from its recorded history")
	// ErrBusy: QueueReject mode and an input is processing; retry later or use QueueQueue.
	ErrBusy = errors.New("agent: session is processing another input (queue mode reject); retry when it is idle")
	// ErrQueueFull: too many Submits are waiting; raise SessionConfig.MaxQueueDepth or slow down.
	ErrQueueFull = errors.New("agent: too many inputs are queued; raise SessionConfig.MaxQueueDepth or wait")
	// ErrInterrupted: the input was stopped by a newer Submit in QueueInterrupt mode.
	ErrInterrupted = errors.New("agent: input interrupted by a newer input")
	// ErrAborted: Abort or Close stopped the input; the session is closed.
	ErrAborted = errors.New("agent: session aborted")
	// ErrParked: a tool (wait on a subagent that runs elsewhere) asked the
	// host to persist and suspend the session. Its history is recorded up to
	// the parking call, which has no result yet; resuming the session re-runs
	// that call. See Park in doc.go.
	ErrParked = errors.New("agent: session parked until a subagent finishes")
	// ErrEmptyInput: Submit got an empty string.
	ErrEmptyInput = errors.New("agent: input is empty; pass the user's message")
)

// TransitionError reports an illegal state transition.
type TransitionError struct {
	From, To State
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("agent: illegal state transition %s -> %s", e.From, e.To)
}
