package store

import "slices"

// TaskState is the lifecycle state of a task; the package doc lists the
// moves between states.
type TaskState string

// Task states.
const (
	TaskQueued    TaskState = "queued"    // waiting for a worker
	TaskRunning   TaskState = "running"   // owned by a worker (Task.WorkerID)
	TaskWaiting   TaskState = "waiting"   // parked: waits for children (Task.WaitingFor), holds no worker
	TaskSucceeded TaskState = "succeeded" // terminal
	TaskFailed    TaskState = "failed"    // terminal; Task.Error says why ("dead_letter", ...)
	TaskCancelled TaskState = "cancelled" // terminal
)

// TaskStates lists every state, active ones first.
var TaskStates = []TaskState{TaskQueued, TaskRunning, TaskWaiting, TaskSucceeded, TaskFailed, TaskCancelled}

// ActiveTaskStates are the non-terminal states.
var ActiveTaskStates = []TaskState{TaskQueued, TaskRunning, TaskWaiting}

// Valid reports whether s is one of the defined states.
func (s TaskState) Valid() bool {
	switch s {
	case TaskQueued, TaskRunning, TaskWaiting, TaskSucceeded, TaskFailed, TaskCancelled:
		return true
	}
	return false
}

// Terminal reports whether s is an end state: succeeded, failed or
// cancelled. Only cancelled is final for good; a succeeded or failed task
// may be reopened (see transitions).
func (s TaskState) Terminal() bool {
	return s == TaskSucceeded || s == TaskFailed || s == TaskCancelled
}

// transitions is the allowed state machine. Beyond the main path
// queued -> running -> (waiting -> running)* -> terminal:
//   - queued -> failed: a message that can never run (dead letter, corrupt spec);
//   - running -> queued: the worker gives the task back (shutdown, retryable
//     failure); the next claim resumes it from its recorded turns;
//   - running -> running: only through ClaimTask with StaleBefore, a takeover
//     of a task whose worker stopped heartbeating;
//   - waiting -> queued: a wake that re-enqueues the parent for any worker;
//   - waiting -> failed: a parked task that can no longer be resumed;
//   - any active state -> cancelled;
//   - succeeded | failed -> queued: a reopen, new input for an ended task
//     (send_input to a child that ended) makes it run again. Cancelled is
//     final: it has no way out.
var transitions = map[TaskState][]TaskState{
	TaskQueued:    {TaskRunning, TaskCancelled, TaskFailed},
	TaskRunning:   {TaskSucceeded, TaskFailed, TaskCancelled, TaskWaiting, TaskQueued, TaskRunning},
	TaskWaiting:   {TaskRunning, TaskQueued, TaskCancelled, TaskFailed},
	TaskSucceeded: {TaskQueued},
	TaskFailed:    {TaskQueued},
}

// Reopens reports whether moving from one state to another reopens an
// ended task (succeeded or failed back to queued).
func Reopens(from, to TaskState) bool {
	return (from == TaskSucceeded || from == TaskFailed) && to == TaskQueued
}

// CanTransition reports whether a task may move from one state to another.
func CanTransition(from, to TaskState) bool {
	return slices.Contains(transitions[from], to)
}

// CheckTransition returns an *InvalidError naming the field when the
// transition is not allowed.
func CheckTransition(from, to TaskState) error {
	switch {
	case !from.Valid():
		return invalidf("From", "unknown task state %q", from)
	case !to.Valid():
		return invalidf("To", "unknown task state %q", to)
	case !CanTransition(from, to):
		return invalidf("To", "a task cannot go from %s to %s (allowed from %s: %v)", from, to, from, transitions[from])
	}
	return nil
}

// String returns the state name.
func (s TaskState) String() string { return string(s) }
