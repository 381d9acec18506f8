package store

import (
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// Sentinels for the conditions callers branch on. Drivers wrap them, so test
// with errors.Is.
var (
	// ErrNotFound: the task, session, turn, tool output or artifact does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrConflict: a compare-and-set lost (the task is not in the expected
	// state or owned by another worker), a turn seq exists already, or an id
	// is taken.
	ErrConflict = errors.New("store: conflict")
	// ErrInvalid: the caller's input is wrong; retrying it will not help.
	ErrInvalid = errors.New("store: invalid input")
)

// InvalidError says which field of the input is wrong and why.
type InvalidError struct {
	Field  string // e.g. "Spec", "Turns[2].Payload"
	Reason string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("store: invalid %s: %s", e.Field, e.Reason)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Is(target error) bool { return target == ErrInvalid }

func invalidf(field, format string, args ...any) *InvalidError {
	return &InvalidError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Invalidf returns an *InvalidError; drivers use it for checks only they can make.
func Invalidf(field, format string, args ...any) error { return invalidf(field, format, args...) }

// PayloadTooLargeError reports a value over the configured size cap.
type PayloadTooLargeError struct {
	Field string // e.g. "Turns[0].Payload"
	Size  int    // bytes
	Limit int    // bytes
	Knob  string // the Limits field that sets the cap
}

func (e *PayloadTooLargeError) Error() string {
	return fmt.Sprintf("store: %s is %d bytes, over the limit of %d bytes (raise Limits.%s, or store large content as a tool output or artifact)",
		e.Field, e.Size, e.Limit, e.Knob)
}

// Is makes errors.Is(err, ErrInvalid) true: the input is wrong as sent.
func (e *PayloadTooLargeError) Is(target error) bool { return target == ErrInvalid }

// RetryableError wraps a backend failure that may succeed if the call is
// made again: the connection dropped, the server restarted, a serialization
// failure or deadlock. The operation did not take effect, except when the
// connection broke during commit; then a retry may see ErrConflict (a turn
// seq or a claim that did land), which callers treat as success after
// checking with a read.
type RetryableError struct {
	Op  string // the store method
	Err error  // the backend error, for logs
}

func (e *RetryableError) Error() string {
	return fmt.Sprintf("store: %s: temporary backend failure, retry: %v", e.Op, e.Err)
}

// Unwrap returns the backend error.
func (e *RetryableError) Unwrap() error { return e.Err }

// Retryable reports true.
func (e *RetryableError) Retryable() bool { return true }

// IsRetryable reports whether err or an error it wraps says it is retryable.
func IsRetryable(err error) bool {
	var r interface{ Retryable() bool }
	return errors.As(err, &r) && r.Retryable()
}

// SeqMismatch explains a turn batch starting at first that does not continue
// a session whose last turn is lastSeq: a repeat is ErrConflict, a gap is
// *InvalidError.
func SeqMismatch(op string, session fmt.Stringer, first, lastSeq int64) error {
	if first <= lastSeq {
		return fmt.Errorf("store: %s: %w: session %s has turns up to seq %d; seq %d exists already",
			op, ErrConflict, session, lastSeq, first)
	}
	return invalidf("Turns[0].Seq", "session %s has turns up to seq %d, so the next is %d, not %d (seqs are gapless)",
		session, lastSeq, lastSeq+1, first)
}

// Conflictf wraps ErrConflict with what the store found; for drivers.
func Conflictf(op, format string, args ...any) error {
	return fmt.Errorf("store: %s: %w: %s", op, ErrConflict, fmt.Sprintf(format, args...))
}

// NotFoundf wraps ErrNotFound with what is missing; for drivers.
func NotFoundf(op, format string, args ...any) error {
	return fmt.Errorf("store: %s: %w: %s", op, ErrNotFound, fmt.Sprintf(format, args...))
}

// KnownError reports whether err is already one of the store's errors, which
// drivers pass through untranslated.
func KnownError(err error) bool {
	return errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) || errors.Is(err, ErrInvalid) || IsRetryable(err)
}

// TaskConflict explains a task compare-and-set that matched no row, from
// what the driver then read: the task's state and worker, and its direct
// parent's id and state ("" for a root). A cancelled parent is named, as it
// is what refuses a claim of a task otherwise in a claimable state.
func TaskConflict(op, id, state, worker, want, parentID, parentState string) error {
	if parentState == string(TaskCancelled) {
		return Conflictf(op, "task %s is %s (worker %q), expected %s, and its parent %s is cancelled: "+
			"a task under a cancelled parent never starts", id, state, worker, want, parentID)
	}
	return Conflictf(op, "task %s is %s (worker %q), expected %s", id, state, worker, want)
}

// NotOwnerError is the ErrConflict of a fenced AppendTurns whose task is not
// running on the worker that appends: it was cancelled, ended, handed back
// or taken over by another worker.
type NotOwnerError struct {
	Op       string
	TaskID   string
	State    TaskState // the task's state now
	WorkerID string    // the task's worker now
	Want     string    // the worker that tried to append
}

func (e *NotOwnerError) Error() string {
	return fmt.Sprintf("store: %s: %v: task %s is %s on worker %q, not running on %q", e.Op, ErrConflict, e.TaskID, e.State, e.WorkerID, e.Want)
}

// Unwrap makes errors.Is(err, ErrConflict) true.
func (e *NotOwnerError) Unwrap() error { return ErrConflict }

// Owns reports whether a task in state on worker is running on want; for
// drivers explaining a fenced append that wrote nothing.
func Owns(state TaskState, worker, want string) bool {
	return state == TaskRunning && worker == want
}

// ForeignSession is the error of a transition whose Append names a session
// of another task.
func ForeignSession(session, owner, task uuid.UUID) error {
	return invalidf("Append.SessionID", "session %s belongs to task %s, not to the transitioned task %s", session, owner, task)
}
